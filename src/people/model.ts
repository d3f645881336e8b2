// TypeBox schemas of the persons API's answers, for the OpenAPI document.
import { t } from 'elysia'
import { model } from '../http/openapi'
import { pageModel } from '../http/pagination'

export const Person = model(
  'Person',
  t.Object({
    id: t.String({ format: 'uuid', description: 'the same as uuid' }),
    uuid: t.String({ format: 'uuid' }),
    distinct_ids: t.Array(t.String()),
    properties: t.Record(t.String(), t.Unknown()),
    is_identified: t.Boolean(),
    created_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  }),
)

export const PersonPage = pageModel('PersonPage', Person)
