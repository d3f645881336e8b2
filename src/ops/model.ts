// TypeBox schemas of the operations endpoints' answers, for the OpenAPI document.
import { t } from 'elysia'
import { model } from '../http/openapi'

export const Health = model('Health', t.Object({ status: t.Literal('ok') }, { description: 'the process serves HTTP' }))

export const Readiness = model(
  'Readiness',
  t.Object({
    status: t.Union([t.Literal('ready'), t.Literal('not_ready')]),
    checks: t.Record(t.String(), t.String(), { description: 'each store and the drain: "ok" or why not' }),
    backlog: t.Optional(
      t.Object(
        { records: t.Integer(), events: t.Integer(), bytes: t.Integer(), draining: t.Boolean() },
        { description: 'what the write-ahead log still holds for the stores, while it drains' },
      ),
    ),
  }),
)

export const MetricsText = model('MetricsText', t.String({ description: 'Prometheus text exposition format 0.0.4' }))
