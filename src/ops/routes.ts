// Liveness, readiness and Prometheus metrics.
import { Elysia } from 'elysia'
import type { Metrics } from './metrics'
import { documentedAnswer } from '../http/openapi'
import { Health, MetricsText, Readiness as ReadinessAnswer } from './model'

export interface Readiness {
  ready: boolean
  checks: Record<string, string>
  /**
   * What the log holds that the stores have not taken yet. Readiness is about taking requests: while a store that
   * came back drains this, /_ready says 200 (capture and /decide work) and `draining` says events are still landing.
   */
  backlog?: { records: number; events: number; bytes: number; draining: boolean }
}

export function opsRoutes(deps: { metrics: Metrics; readiness: () => Promise<Readiness> }) {
  return new Elysia({ name: 'ops' })
    .get('/_health', () => ({ status: 'ok' }), { detail: { summary: 'Liveness: the process serves HTTP', tags: ['ops'], responses: documentedAnswer(Health) } })
    .get(
      '/_ready',
      async ({ set }) => {
        const r = await deps.readiness()
        set.status = r.ready ? 200 : 503
        return { status: r.ready ? 'ready' : 'not_ready', checks: r.checks, ...(r.backlog ? { backlog: r.backlog } : {}) }
      },
      {
        detail: {
          summary: 'Readiness: 503 while a store is unreachable or the server is draining',
          description:
            'Ready means this process takes requests (capture, /decide, the API). After an outage it is ready again once the stores answer, ' +
            'while the write-ahead log still drains into them: `backlog` says how much is waiting (`draining: true` until it is all stored).',
          tags: ['ops'],
          responses: { 200: { description: 'ready', content: { 'application/json': { schema: ReadinessAnswer } } }, 503: { description: 'not ready (same body)', content: { 'application/json': { schema: ReadinessAnswer } } } } as never,
        },
      },
    )
    .get(
      '/metrics',
      async ({ set }) => {
        set.headers['content-type'] = deps.metrics.registry.contentType
        await Promise.all(deps.metrics.beforeScrape.map((update) => update()))
        return deps.metrics.registry.metrics()
      },
      { detail: { summary: 'Prometheus metrics', tags: ['ops'], responses: { 200: { description: 'OK', content: { 'text/plain': { schema: MetricsText } } } } as never } },
    )
}
