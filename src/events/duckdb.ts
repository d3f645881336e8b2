// The embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): DATA_DIR/events.duckdb, owned by a thread of
// its own (duckdb-owner.ts); every instance of this store (the main thread's, the flush worker's) asks it.
import { accessDuckDb } from './duckdb-access'
import { type DuckDbAccess, type DuckDbSettings, type SqlValue } from './duckdb-database'
import { StoreError, type EventQuery, type EventStore, type InsertOptions, type StoredEvent } from './store'

const COLUMNS = 'uuid, team_id, event, distinct_id, properties, timestamp, created_at, person_id'
/** ids per statement in the look-ups and the erasure */
const IDS_PER_STATEMENT = 1000
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function classify(error: unknown): StoreError {
  const message = (error as Error)?.message ?? String(error)
  // a value DuckDB cannot take (conversion, constraint) is about the rows; everything else may pass
  const permanent = /^(Conversion|Constraint|Invalid Input) Error/.test(message)
  return new StoreError(`embedded store: ${message}`, !permanent, error)
}

function fromRow(r: unknown[]): StoredEvent {
  return {
    uuid: String(r[0]),
    teamId: Number(r[1]),
    event: String(r[2]),
    distinctId: String(r[3]),
    properties: String(r[4]),
    timestamp: Number(r[5]),
    createdAt: Number(r[6]),
    personId: r[7] === null ? null : String(r[7]),
  }
}

export class DuckDbEventStore implements EventStore {
  readonly kind = 'embedded' as const
  readonly timestampPrecisionMs = 1
  private access: DuckDbAccess | undefined

  constructor(
    private readonly file: string,
    private readonly settings: DuckDbSettings,
  ) {}

  async init(): Promise<void> {
    if (this.access) return
    try {
      this.access = await accessDuckDb(this.file, this.settings)
    } catch (error) {
      if (/Could not set lock/i.test((error as Error)?.message ?? '')) {
        // DuckDB lets one process open the file: a CLI command while the service runs, or a second service
        throw new StoreError(`embedded store: ${this.file} is held by another process (the running service?); DuckDB lets one process open it at a time`, true, error)
      }
      throw classify(error)
    }
  }

  private get db(): DuckDbAccess {
    if (!this.access) throw new StoreError('embedded store is closed', true)
    return this.access
  }

  private async attempt<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw error instanceof StoreError ? error : classify(error)
    }
  }

  insertBatch(rows: StoredEvent[], options: InsertOptions): Promise<number> {
    return this.attempt(() => this.db.insertEvents(rows, options.inDoubt))
  }

  /** The events API's filter, cursor and limit as a WHERE … LIMIT clause and its parameters. */
  private filterOf(q: EventQuery): [string, SqlValue[]] {
    const where = [`team_id = ${Math.trunc(q.teamId)}`]
    const params: SqlValue[] = []
    if (q.event !== undefined) where.push('event = ?'), params.push(q.event)
    if (q.distinctId !== undefined) where.push('distinct_id = ?'), params.push(q.distinctId)
    if (q.after !== undefined) where.push(`timestamp >= ${Math.trunc(q.after)}`)
    if (q.before !== undefined) where.push(`timestamp < ${Math.trunc(q.before)}`)
    if (q.cursor) {
      const t = Math.trunc(q.cursor.timestamp)
      where.push(`(timestamp < ${t} OR (timestamp = ${t} AND uuid < ?))`)
      params.push(q.cursor.uuid)
    }
    return [`WHERE ${where.join(' AND ')} ORDER BY timestamp DESC, uuid DESC LIMIT ${Math.max(0, Math.trunc(q.limit))}`, params]
  }

  query(q: EventQuery): Promise<StoredEvent[]> {
    const [filter, params] = this.filterOf(q)
    return this.attempt(async () => (await this.db.all(`SELECT ${COLUMNS} FROM events ${filter}`, params)).map(fromRow))
  }

  rowSizes(q: EventQuery): Promise<number[]> {
    const [filter, params] = this.filterOf(q)
    // strlen: bytes of the UTF-8 text
    return this.attempt(async () => (await this.db.all(`SELECT strlen(event) + strlen(distinct_id) + strlen(properties) FROM events ${filter}`, params)).map((r) => Number(r[0])))
  }

  countByUuid(teamId: number, uuids: string[]): Promise<Map<string, number>> {
    return this.attempt(async () => {
      const counts = new Map<string, number>()
      for (let i = 0; i < uuids.length; i += IDS_PER_STATEMENT) {
        const chunk = uuids.slice(i, i + IDS_PER_STATEMENT)
        // canonical uuids go into the statement as literals (nothing in them can be quoted): DuckDB ran an IN list of
        // 1,000 bound parameters ten times slower (250 ms against 20 ms over 200,000 rows), and `import events`
        // asks this once a batch; any other text stays a parameter
        const others = chunk.filter((u) => !CANONICAL_UUID.test(u))
        const list = [...chunk.filter((u) => CANONICAL_UUID.test(u)).map((u) => `'${u}'`), ...others.map(() => '?')].join(',')
        const rows = await this.db.all(`SELECT uuid, count(*) FROM events WHERE team_id = ${Math.trunc(teamId)} AND uuid IN (${list}) GROUP BY uuid`, others)
        for (const [uuid, n] of rows) counts.set(String(uuid), Number(n))
      }
      return counts
    })
  }

  /** One statement per thousand ids: DuckDB deletes on its own threads, the event loop is not held. */
  deleteEvents(teamId: number, distinctIds: string[]): Promise<void> {
    return this.attempt(async () => {
      for (let i = 0; i < distinctIds.length; i += IDS_PER_STATEMENT) {
        const ids = distinctIds.slice(i, i + IDS_PER_STATEMENT)
        await this.db.write(`DELETE FROM events WHERE team_id = ${Math.trunc(teamId)} AND distinct_id IN (${ids.map(() => '?').join(',')})`, ids)
      }
    })
  }

  async health(): Promise<boolean> {
    try {
      await this.db.all('SELECT 1')
      return true
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    const access = this.access
    this.access = undefined
    await access?.release()
  }
}
