// What the import needs of the stores of the process that runs it: the projects (Postgres), the event store's
// uuid lookup, and the log's consumers' progress.
import type { Sql } from 'postgres'
import type { EventLog } from '../capture/service'
import type { EventStore } from '../events/store'
import { LEARNER } from '../people/learner'
import { HISTORY_WRITER } from '../pipeline/history-writer'
import { STORE_WRITER } from '../pipeline/store-writer'
import type { ImportDeps } from './service'

export interface ImportSources {
  sql: Sql
  events: Pick<EventStore, 'countByUuid'>
  log: EventLog & { caughtUp(consumers: string[], timeoutMs: number): Promise<boolean> }
}

export function importDeps({ sql, events, log }: ImportSources): ImportDeps {
  return {
    log,
    countByUuid: (projectId, uuids) => events.countByUuid(projectId, uuids),
    // stored, history included, and learned from: persons and definitions made
    stored: (timeoutMs) => log.caughtUp([STORE_WRITER, HISTORY_WRITER, LEARNER], timeoutMs),
    projectOfToken: async (token) => {
      const [row] = await sql<{ id: number }[]>`select id from projects where api_token = ${token}`
      return row?.id ?? null
    },
    projectExists: async (id) => (await sql`select 1 from projects where id = ${id}`).length > 0,
    onlyProject: async () => {
      const rows = await sql<{ id: number }[]>`select id from projects order by id limit 2`
      return rows.length === 1 ? rows[0]!.id : null
    },
  }
}
