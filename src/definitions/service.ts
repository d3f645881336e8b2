// The definitions REST API behind the routes: read, change and delete event definitions of one project.
// Never sees the HTTP context: the routes hand it the project, the parsed query and the request body.
import type { Sql } from 'postgres'
import { isUniqueViolation } from '../db/postgres'
import { errors } from '../http/errors'
import { UUID_PATTERN } from '../http/fields'
import { deleteDefinition, getDefinition, listDefinitions, updateDefinition, type ListQuery } from './repository'
import { eventDefinitionJson } from './serialize'
import { parseEventChanges } from './validation'

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

  async updateEvent(teamId: number, id: string, body: unknown) {
    await this.findEvent(teamId, id)
    const changes = parseEventChanges(body)
    try {
      const row = await updateDefinition(this.deps.sql, teamId, id, changes)
      if (!row) throw errors.notFound()
      return eventDefinitionJson(row)
    } catch (error) {
      if (isUniqueViolation(error)) throw errors.validation('unique', `Event definition with name '${changes.name}' already exists`, 'name')
      throw error
    }
  }

  async deleteEvent(teamId: number, id: string): Promise<void> {
    if (!UUID_PATTERN.test(id) || !(await deleteDefinition(this.deps.sql, teamId, id))) throw errors.notFound()
  }
}
