// Reading the embedded event store for a move: each project's events in (timestamp, uuid) order, a batch at a time,
// from SQLite (its time index, walked backwards) or DuckDB (one sorted stream per project), read-only. The service
// is stopped meanwhile (the move holds DATA_DIR), so the order is stable and a resumed move continues after its cursor.
import { Database } from 'bun:sqlite'
import type { StoredEvent } from '../events/store'
import type { EventCursor } from './marker'

export interface EmbeddedEventReader {
  readonly kind: 'sqlite' | 'duckdb'
  /** events per project id */
  countsByProject(): Promise<Map<number, number>>
  /** the project's events after `after` (strictly), in (timestamp, uuid) order, `batch` at a time */
  batches(teamId: number, after: EventCursor | null, batch: number): AsyncGenerator<StoredEvent[]>
  close(): Promise<void>
}

type RawRow = [uuid: string, teamId: number | bigint, event: string, distinctId: string, properties: string, timestamp: number | bigint, createdAt: number | bigint, personId: string | null]

const COLUMNS = 'uuid, team_id, event, distinct_id, properties, timestamp, created_at, person_id'

const toStored = (r: RawRow): StoredEvent => ({
  uuid: String(r[0]),
  teamId: Number(r[1]),
  event: r[2],
  distinctId: r[3],
  properties: r[4],
  timestamp: Number(r[5]),
  createdAt: Number(r[6]),
  personId: r[7] === null ? null : String(r[7]),
})

export class SqliteEventReader implements EmbeddedEventReader {
  readonly kind = 'sqlite' as const
  private readonly db: Database

  constructor(file: string) {
    this.db = new Database(file, { readonly: true })
  }

  async countsByProject(): Promise<Map<number, number>> {
    const rows = this.db.query('SELECT team_id, count(*) AS n FROM events GROUP BY team_id').all() as { team_id: number; n: number }[]
    return new Map(rows.map((r) => [Number(r.team_id), Number(r.n)]))
  }

  async *batches(teamId: number, after: EventCursor | null, batch: number): AsyncGenerator<StoredEvent[]> {
    // (team_id, timestamp DESC, uuid DESC) read backwards: ascending time, no sort
    const first = this.db.query(`SELECT ${COLUMNS} FROM events WHERE team_id = ? ORDER BY timestamp, uuid LIMIT ?`)
    const next = this.db.query(`SELECT ${COLUMNS} FROM events WHERE team_id = ? AND (timestamp, uuid) > (?, ?) ORDER BY timestamp, uuid LIMIT ?`)
    let cursor = after
    for (;;) {
      const rows = (cursor === null ? first.values(teamId, batch) : next.values(teamId, cursor.timestamp, cursor.uuid, batch)) as RawRow[]
      if (rows.length === 0) return
      const events = rows.map(toStored)
      const last = events[events.length - 1]
      cursor = { teamId, timestamp: last.timestamp, uuid: last.uuid }
      yield events
      if (rows.length < batch) return
    }
  }

  async close(): Promise<void> {
    this.db.close()
  }
}

export class DuckDbEventReader implements EmbeddedEventReader {
  readonly kind = 'duckdb' as const

  private constructor(
    private readonly instance: import('@duckdb/node-api').DuckDBInstance,
    private readonly connection: import('@duckdb/node-api').DuckDBConnection,
  ) {}

  static async open(file: string): Promise<DuckDbEventReader> {
    const { DuckDBInstance } = await import('@duckdb/node-api')
    const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' })
    return new DuckDbEventReader(instance, await instance.connect())
  }

  async countsByProject(): Promise<Map<number, number>> {
    const rows = (await this.connection.runAndReadAll('SELECT team_id, count(*) FROM events GROUP BY team_id')).getRows()
    return new Map(rows.map(([team, n]) => [Number(team), Number(n)]))
  }

  /** Whether the copy of an older install's SQLite events into this file has finished (or never had to happen). */
  async sqliteImportFinished(): Promise<boolean> {
    const rows = (await this.connection.runAndReadAll('SELECT count(*) FILTER (WHERE finished_at IS NULL) FROM sqlite_import')).getRows()
    return Number(rows[0]?.[0] ?? 0) === 0
  }

  async *batches(teamId: number, after: EventCursor | null, batch: number): AsyncGenerator<StoredEvent[]> {
    const where = after === null ? 'team_id = $1' : 'team_id = $1 AND (timestamp > $2 OR (timestamp = $2 AND uuid > $3))'
    const params = after === null ? [teamId] : [teamId, after.timestamp, after.uuid]
    // numbers as DOUBLE (JavaScript numbers, not BigInts) and read a column at a time: 1.7x faster than getRows()
    const result = await this.connection.stream(
      `SELECT uuid, team_id::DOUBLE, event, distinct_id, properties, timestamp::DOUBLE, created_at::DOUBLE, person_id FROM events WHERE ${where} ORDER BY timestamp, uuid`,
      params,
    )
    let pending: StoredEvent[] = []
    for (;;) {
      const chunk = await result.fetchChunk()
      if (!chunk || chunk.rowCount === 0) break
      const [uuid, team, event, distinctId, properties, timestamp, createdAt, personId] = chunk.getColumns() as unknown[][]
      for (let i = 0; i < uuid.length; i++) {
        pending.push(toStored([uuid[i], team[i], event[i], distinctId[i], properties[i], timestamp[i], createdAt[i], personId[i]] as RawRow))
      }
      while (pending.length >= batch) {
        yield pending.slice(0, batch)
        pending = pending.slice(batch)
      }
    }
    if (pending.length > 0) yield pending
  }

  async close(): Promise<void> {
    this.connection.closeSync()
    this.instance.closeSync()
  }
}
