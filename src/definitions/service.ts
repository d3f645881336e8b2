// The definitions REST API behind the routes: event definitions of one project (property definitions are in
// property-service.ts), and bulk tagging, which both share. Never sees the HTTP context: the routes hand it the
// project, the caller's user id, the parsed query and the request body.
import type { Sql } from 'postgres'
import { isUniqueViolation } from '../db/postgres'
import { errors } from '../http/errors'
import { UUID_PATTERN } from '../http/fields'
import {
  bulkUpdateTags,
  createDefinition,
  deleteDefinition,
  getDefinition,
  getDefinitionByName,
  listDefinitions,
  updateDefinition,
  type DefinitionChanges,
  type ListQuery,
} from './repository'
import { curate, parseBulkTags, sortedTags, type Curation, type CurationChange } from './rules'
import { eventDefinitionJson } from './serialize'
import { parseEventChanges, parseEventCreate } from './validation'

const NOT_CURATED: Curation = { verified: false, verified_at: null, verified_by_id: null, hidden: false }

/** The curation columns a write sets, or none when it names neither verified nor hidden. */
export function curationWrite(current: Curation, change: CurationChange, userId: number, what: 'An event' | 'A property'): Partial<Curation> {
  if (change.verified === undefined && change.hidden === undefined) return {}
  return curate(current, change, userId, new Date(), what)
}

/** bulk_update_tags for either kind: ids that are not the project's (or not UUIDs) are skipped, not refused. */
export async function bulkTags(sql: Sql, table: 'event_definitions' | 'property_definitions', teamId: number, userId: number, body: unknown) {
  const { ids, action, tags } = parseBulkTags(body)
  const rows = await bulkUpdateTags(sql, table, teamId, ids.filter((id) => UUID_PATTERN.test(id)), action, tags, userId)
  const tagsOf = new Map(rows.map((r) => [r.id, r.tags]))
  const updated: { id: string; tags: string[] }[] = []
  const skipped: { id: string; reason: string }[] = []
  for (const id of ids) {
    const found = tagsOf.get(id.toLowerCase())
    if (found) updated.push({ id, tags: sortedTags(found) })
    else skipped.push({ id, reason: 'Not found' })
  }
  return { updated, skipped }
}

export class DefinitionService {
  constructor(private readonly deps: { sql: Sql }) {}

  async listEvents(query: ListQuery) {
    const { count, rows } = await listDefinitions(this.deps.sql, query)
    return { count, results: rows.map(eventDefinitionJson) }
  }

  private async findEvent(teamId: number, id: string) {
    const row = UUID_PATTERN.test(id) ? await getDefinition(this.deps.sql, teamId, id) : null
    if (!row) throw errors.notFound()
    return row
  }

  async retrieveEvent(teamId: number, id: string) {
    return eventDefinitionJson(await this.findEvent(teamId, id))
  }

  async retrieveEventByName(teamId: number, name: string | undefined) {
    if (name === undefined || name === '') throw errors.validation('required', "Query parameter 'name' is required", 'name')
    const row = await getDefinitionByName(this.deps.sql, teamId, name)
    if (!row) throw errors.notFound(`Event definition with name '${name}' not found`)
    return eventDefinitionJson(row)
  }

  /** A definition ahead of ingestion; the event's first sighting later fills in last_seen_at on the same row. */
  async createEvent(teamId: number, userId: number, body: unknown) {
    const input = parseEventCreate(body)
    const curation = curate(NOT_CURATED, input.curation, userId, new Date(), 'An event')
    try {
      const row = await createDefinition(this.deps.sql, teamId, { ...input, ...curation, created_by_id: userId })
      return eventDefinitionJson(row)
    } catch (error) {
      throw this.nameTaken(error, input.name)
    }
  }

  async updateEvent(teamId: number, id: string, userId: number, body: unknown) {
    const current = await this.findEvent(teamId, id)
    const { changes, curation } = parseEventChanges(body)
    const write: DefinitionChanges = { ...changes, ...curationWrite(current, curation, userId, 'An event') }
    try {
      const row = await updateDefinition(this.deps.sql, teamId, current.id, write)
      if (!row) throw errors.notFound()
      return eventDefinitionJson(row)
    } catch (error) {
      throw this.nameTaken(error, changes.name)
    }
  }

  async deleteEvent(teamId: number, id: string): Promise<void> {
    if (!UUID_PATTERN.test(id) || !(await deleteDefinition(this.deps.sql, teamId, id))) throw errors.notFound()
  }

  bulkTagEvents(teamId: number, userId: number, body: unknown) {
    return bulkTags(this.deps.sql, 'event_definitions', teamId, userId, body)
  }

  private nameTaken(error: unknown, name: string | undefined): unknown {
    if (isUniqueViolation(error)) return errors.validation('unique', `Event definition with name '${name}' already exists`, 'name')
    return error
  }
}
