// TypeBox schemas of the events API's answers, for the OpenAPI document.
import { t } from 'elysia'
import { model } from '../http/openapi'

export const Event = model(
  'Event',
  t.Object({
    id: t.String({ format: 'uuid', description: 'the same as uuid' }),
    uuid: t.String({ format: 'uuid' }),
    event: t.String(),
    distinct_id: t.String(),
    properties: t.Record(t.String(), t.Unknown()),
    timestamp: t.String({ format: 'date-time', description: 'ISO 8601 in UTC' }),
    person_id: t.Union([t.String(), t.Null()], { description: 'the person the distinct id belongs to now, if any' }),
  }),
)

export const EventPage = model(
  'EventPage',
  t.Object({
    results: t.Array(Event, { description: 'newest first (timestamp, then uuid)' }),
    next: t.Union([t.String(), t.Null()], { description: 'absolute URL continuing the listing exactly; null on the last page' }),
  }),
)

export const PropertyValueList = model(
  'PropertyValueList',
  t.Array(t.Object({ name: t.String({ maxLength: 200, description: 'a value, cut to 200 characters' }) }), {
    maxItems: 50,
    description: 'the most frequent values of the last 7 days, most frequent first',
  }),
)
