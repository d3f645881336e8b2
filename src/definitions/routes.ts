// /api/projects/:project_id/event_definitions/ — list, retrieve, PATCH, DELETE (personal key).
import { isUniqueViolation } from '../db/postgres'
import { Elysia, t } from 'elysia'
import type { Sql } from 'postgres'
import type { PersonalKeyAuth } from '../projects/auth'
import { errors } from '../http/errors'
import { charField, UUID_PATTERN } from '../http/fields'
import { isoDate } from '../http/format'
import { personalKeyGuard } from '../projects/guards'
import { page, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import { parseTimestamp } from '../capture/timestamp'
import {
  deleteDefinition,
  getDefinition,
  listDefinitions,
  updateDefinition,
  type DefinitionChanges,
  type DefinitionRow,
  type EventType,
  type OrderKey,
} from './repository'

const ORDER_KEYS = new Set<OrderKey>(['name', 'last_seen_at', 'last_seen_at::date', 'created_at', 'created_at::date'])
const EVENT_TYPES: Record<string, EventType> = {
  event: 'event',
  all: 'event',
  action_event: 'event',
  event_custom: 'event_custom',
  event_posthog: 'event_posthog',
}
const PATCHABLE = new Set(['name', 'created_at', 'last_seen_at', 'tags', 'post_to_chat'])

export function definitionJson(d: DefinitionRow) {
  return {
    id: d.id,
    name: d.name,
    created_at: isoDate(d.created_at),
    last_seen_at: isoDate(d.last_seen_at),
    last_updated_at: isoDate(d.last_updated_at),
    tags: d.tags,
    is_action: false,
    action_id: null,
    is_calculating: false,
    last_calculated_at: null,
    created_by: d.created_by,
    post_to_chat: d.post_to_chat,
  }
}

/** `ordering`, repeated and/or comma-joined; unknown keys are ignored (as PostHog does). */
export function parseOrdering(values: string[]): { key: OrderKey; descending: boolean }[] {
  const out: { key: OrderKey; descending: boolean }[] = []
  for (const part of values.flatMap((v) => v.split(','))) {
    const trimmed = part.trim()
    const descending = trimmed.startsWith('-')
    const key = (descending ? trimmed.slice(1) : trimmed) as OrderKey
    if (ORDER_KEYS.has(key) && !out.some((o) => o.key === key)) out.push({ key, descending })
  }
  return out
}

/** Each term is one more pattern over every definition: a thousand of them once held a query for 19 s. */
export const MAX_SEARCH_TERMS = 10
export const MAX_SEARCH_TERM_LENGTH = 200

/** `search`: split on spaces; NUL characters dropped; at most 10 terms of at most 200 characters. */
export function searchTerms(search: string | undefined): string[] {
  const terms = (search ?? '').replace(/\0/g, '').split(' ').filter((t) => t.length > 0)
  if (terms.length > MAX_SEARCH_TERMS || terms.some((t) => t.length > MAX_SEARCH_TERM_LENGTH)) {
    throw errors.validation('invalid_input', `search takes at most ${MAX_SEARCH_TERMS} terms of at most ${MAX_SEARCH_TERM_LENGTH} characters.`, 'search')
  }
  return terms
}

// Dates Postgres and its driver give back as they were given: postgres.js reads years 1–99 as 19xx/20xx.
const EARLIEST_DATE_MS = Date.UTC(1900, 0, 1)
const LATEST_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})/

function dateMember(value: unknown, attr: string): Date | null {
  if (value === null) return null
  const ms = typeof value === 'string' ? parseTimestamp(value) : null
  if (ms === null) throw errors.validation('invalid', 'Datetime has wrong format. Use ISO 8601.', attr)
  // 2024-02-30 is not 2024-03-01: a day the month does not have is refused, not rolled over
  const calendar = CALENDAR_DATE.exec((value as string).trim())
  if (calendar) {
    const [, y, m, d] = calendar.map(Number) as [number, number, number, number]
    const day = new Date(Date.UTC(2000, 0, 1))
    day.setUTCFullYear(y, m - 1, d)
    if (day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) throw errors.validation('invalid', 'Datetime has wrong format. Use ISO 8601.', attr)
  }
  if (ms < EARLIEST_DATE_MS || ms > LATEST_DATE_MS) {
    throw errors.validation('invalid', 'Datetime out of range: use a date between 1900-01-01 and 9999-12-31.', attr)
  }
  return new Date(ms)
}

/** A PATCH body checked member by member, so each error names its attribute. */
export function parseChanges(body: unknown): DefinitionChanges {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.validation('parse_error', 'Expected a JSON object.')
  }
  const changes: DefinitionChanges = {}
  for (const [key, value] of Object.entries(body)) {
    if (!PATCHABLE.has(key)) throw errors.validation('invalid_input', `Unknown field "${key}": only name, created_at, last_seen_at, tags and post_to_chat can be changed.`, key)
    if (key === 'name') {
      changes.name = charField(value, 'name', { allowBlank: false, maxLength: 400 })
    } else if (key === 'created_at' || key === 'last_seen_at') {
      changes[key] = dateMember(value, key)
    } else if (key === 'tags') {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
        throw errors.validation('not_a_list', 'Expected a list of strings.', 'tags')
      }
      // PostHog's tagify: trimmed, lower-cased, without duplicates
      changes.tags = [...new Set((value as string[]).map((v) => v.trim().toLowerCase()).filter(Boolean))]
    } else if (key === 'post_to_chat') {
      if (typeof value !== 'boolean') throw errors.validation('invalid', 'Must be a valid boolean.', 'post_to_chat')
      changes.post_to_chat = value
    }
  }
  return changes
}

export function definitionRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean }) {
  const base = '/api/projects/:project_id/event_definitions'
  const params = t.Object({ project_id: t.String() })
  const idParams = t.Object({ project_id: t.String(), id: t.String() })
  const find = async (teamId: number, id: string) => {
    const row = UUID_PATTERN.test(id) ? await getDefinition(deps.sql, teamId, id) : null
    if (!row) throw errors.notFound()
    return row
  }
  return new Elysia({ name: 'definitions' })
    .use(personalKeyGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      async ({ principal, params, query, request }) => {
        const project = await deps.auth.project(principal, params.project_id)
        const { limit, offset } = parsePaging(query)
        const url = publicUrl(request, deps.trustProxy)
        const eventType = EVENT_TYPES[query.event_type ?? 'event']
        if (!eventType) {
          throw errors.validation('invalid_input', 'Not a valid event type. Use one of: event, event_custom, event_posthog.', 'event_type')
        }
        const { count, rows } = await listDefinitions(deps.sql, {
          teamId: project.id,
          limit,
          offset,
          terms: searchTerms(query.search),
          eventType,
          ordering: parseOrdering(url.searchParams.getAll('ordering')),
        })
        return page(url, count, limit, offset, rows.map(definitionJson))
      },
      {
        params,
        query: t.Object({
          ...PageQuery,
          search: t.Optional(t.String({ description: 'every space-separated term must appear in the name' })),
          ordering: t.Optional(t.Union([t.String(), t.Array(t.String())], { description: 'name, last_seen_at, created_at (…::date); - for descending' })),
          event_type: t.Optional(t.String({ description: 'event (default), event_custom or event_posthog' })),
        }),
        detail: { tags: ['event definitions'], summary: 'List event definitions' },
      },
    )
    .get(`${base}/:id/`, async ({ principal, params }) => definitionJson(await find((await deps.auth.project(principal, params.project_id)).id, params.id)), {
      params: idParams,
      detail: { tags: ['event definitions'], summary: 'Retrieve an event definition' },
    })
    .patch(
      `${base}/:id/`,
      async ({ principal, params, body }) => {
        const project = await deps.auth.project(principal, params.project_id)
        await find(project.id, params.id)
        const changes = parseChanges(body)
        try {
          const row = await updateDefinition(deps.sql, project.id, params.id, changes)
          if (!row) throw errors.notFound()
          return definitionJson(row)
        } catch (error) {
          if (isUniqueViolation(error)) {
            throw errors.validation('unique', `Event definition with name '${changes.name}' already exists`, 'name')
          }
          throw error
        }
      },
      {
        params: idParams,
        body: t.Unknown({ description: 'any of: name, created_at, last_seen_at, tags, post_to_chat' }),
        detail: { tags: ['event definitions'], summary: 'Update an event definition' },
      },
    )
    .delete(
      `${base}/:id/`,
      async ({ principal, params, set }) => {
        const project = await deps.auth.project(principal, params.project_id)
        if (!UUID_PATTERN.test(params.id) || !(await deleteDefinition(deps.sql, project.id, params.id))) throw errors.notFound()
        set.status = 204
        return new Response(null, { status: 204 })
      },
      { params: idParams, detail: { tags: ['event definitions'], summary: 'Delete an event definition' } },
    )
}
