// GET /api/projects/:project_id/events/values/?key=&value=&event_name= — the most frequent recent values of an event
// property (PostHog's value suggestions). Read scope `query:read`, like the events API.
import { Elysia, t } from 'elysia'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import type { RateLimiter } from '../http/rate-limit'
import { documentedAnswer } from '../http/openapi'
import { PropertyValueList } from './model'
import type { Offload } from '../http/offload'
import type { eventOperations } from './operations'
import { PROPERTY_VALUE_LIMITS } from './property-values'

export function eventValueRoutes(deps: { offload: Offload<typeof eventOperations>; auth: PersonalKeyAuth; limiter?: RateLimiter }) {
  const { keyChars, prefixChars, eventNameChars, values, valueChars, windowDays } = PROPERTY_VALUE_LIMITS
  return new Elysia({ name: 'event-values-api' }).use(projectGuard(deps.auth, deps.limiter)).get(
    '/api/projects/:project_id/events/values/',
    // bounds are checked by the service, so that each refusal names its field with the one error shape
    ({ project, query, request }) => deps.offload('events.values', [project.id, { key: query.key ?? '', value: query.value, eventName: query.event_name }], { request }),
    {
      params: t.Object({ project_id: t.String() }),
      query: t.Object({
        key: t.Optional(t.String({ description: `the event property (required; at most ${keyChars} characters, no quote, backslash or control character)` })),
        value: t.Optional(t.String({ description: `only values containing this text, case-insensitive (at most ${prefixChars} characters)` })),
        event_name: t.Optional(t.String({ description: `only events of this name (at most ${eventNameChars} characters)` })),
      }),
      detail: {
        tags: ['events'],
        summary: 'Values of an event property',
        description: `The ${values} most frequent values of the last ${windowDays} days, each cut to ${valueChars} characters.`,
        responses: documentedAnswer(PropertyValueList),
      },
    },
  )
}
