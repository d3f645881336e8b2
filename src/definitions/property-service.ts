// Property definitions of one project behind the routes: list, retrieve, change, delete, seen_together and
// bulk tagging. Never sees the HTTP context.
import type { Sql } from 'postgres'
import { errors } from '../http/errors'
import { UUID_PATTERN } from '../http/fields'
import { deleteProperty, eventsSeenWith, getProperty, listProperties, updateProperty, type PropertyListQuery } from './property-repository'
import { parsePropertyChanges } from './property-validation'
import { propertyDefinitionJson } from './serialize'
import { bulkTags, curationWrite } from './service'

export class PropertyDefinitionService {
  constructor(private readonly deps: { sql: Sql }) {}

  async list(query: PropertyListQuery) {
    const { count, rows } = await listProperties(this.deps.sql, query)
    return { count, results: rows.map(propertyDefinitionJson) }
  }

  private async find(teamId: number, id: string) {
    const row = UUID_PATTERN.test(id) ? await getProperty(this.deps.sql, teamId, id) : null
    if (!row) throw errors.notFound()
    return row
  }

  async retrieve(teamId: number, id: string) {
    return propertyDefinitionJson(await this.find(teamId, id))
  }

  /** PATCH and PUT alike: the members given change; a type sets is_numerical with it. */
  async update(teamId: number, id: string, userId: number, body: unknown) {
    const current = await this.find(teamId, id)
    const { changes, curation } = parsePropertyChanges(body)
    const row = await updateProperty(this.deps.sql, teamId, current.id, userId, { ...changes, ...curationWrite(current, curation, userId, 'A property') })
    if (!row) throw errors.notFound()
    return propertyDefinitionJson(row)
  }

  async delete(teamId: number, id: string): Promise<void> {
    if (!UUID_PATTERN.test(id) || !(await deleteProperty(this.deps.sql, teamId, id))) throw errors.notFound()
  }

  /** For each event name: has the property been seen on it? */
  async seenTogether(teamId: number, events: string[], property: string): Promise<Record<string, boolean>> {
    const seen = await eventsSeenWith(this.deps.sql, teamId, events, property)
    return Object.fromEntries(events.map((event) => [event, seen.has(event)]))
  }

  bulkTag(teamId: number, userId: number, body: unknown) {
    return bulkTags(this.deps.sql, 'property_definitions', teamId, userId, body)
  }
}
