// The recording store on ClickHouse (CLICKHOUSE_URL): the table session_replay_blocks (sql/clickhouse/0003), one row
// per block with its metadata and its JSON lines. A session's metadata is folded at read time (GROUP BY session_id,
// over FINAL rows, so that a block written twice counts once); the active time joins the blocks' activity spans in
// code. Deletions are mutations (lightweight deletes from 23.3), waited for as the event store's erasure waits.
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client'
import { eraseMethod, type EraseMethod } from '../events/clickhouse-erase'
import { parseClickHouseUrl, replicaChoice, type ClickHouseTarget } from '../events/clickhouse-target'
import { stringLiteral } from '../events/dialect'
import { ACTIVITY_THRESHOLD_MS } from './metadata'
import type { BlockInfo, BlockWrite, RecordingListQuery, RecordingRow, RecordingStore } from './store'

/** Longest wait for a deletion on servers that run it in the background (18.16). */
const MUTATION_WAIT_MS = 60_000
/** sessions per deletion statement (well under max_query_size) */
const SESSIONS_PER_STATEMENT = 200

interface SessionRow {
  session_id: string
  owner: string
  first_ts: string | number
  last_ts: string | number
  url: string
  clicks: string | number
  keys: string | number
  mouse: string | number
  active: string | number
  spans: [string | number, string | number, string | number][]
  logs: string | number
  warns: string | number
  errors: string | number
  bytes: string | number
  events: string | number
  blocks: string | number
  source: string
  library: string
}

/** The active time of a session from its blocks' own active time and activity spans (first, last): a gap of at most 5 s between blocks counts. */
export function joinedActiveMs(ownMs: number, spans: [first: number, last: number][]): number {
  const sorted = spans.filter(([first]) => first >= 0).sort((a, b) => a[0] - b[0])
  let ms = ownMs
  for (let i = 1; i < sorted.length; i++) {
    const gap = sorted[i][0] - sorted[i - 1][1]
    if (gap > 0 && gap <= ACTIVITY_THRESHOLD_MS) ms += gap
  }
  return ms
}

function fromRow(teamId: number, r: SessionRow): RecordingRow {
  const own = Number(r.active)
  return {
    teamId,
    sessionId: r.session_id,
    distinctId: r.owner,
    firstTimestamp: Number(r.first_ts),
    lastTimestamp: Number(r.last_ts),
    firstUrl: r.url === '' ? null : r.url,
    clickCount: Number(r.clicks),
    keypressCount: Number(r.keys),
    mouseActivityCount: Number(r.mouse),
    activeMs: joinedActiveMs(own, r.spans.map(([first, last]) => [Number(first), Number(last)])),
    consoleLogCount: Number(r.logs),
    consoleWarnCount: Number(r.warns),
    consoleErrorCount: Number(r.errors),
    size: Number(r.bytes),
    eventCount: Number(r.events),
    blockCount: Number(r.blocks),
    source: r.source,
    library: r.library === '' ? null : r.library,
  }
}

const int = (n: number) => String(Math.trunc(n))

/** ClickHouse's default max_query_size: a query naming a person's distinct ids may be longer. */
const DEFAULT_MAX_QUERY_SIZE = 262_144

/**
 * The setting a long query needs: a person's distinct ids are named in the query (persons live in Postgres), and a
 * person of 3,000 distinct ids of 150 characters made the list by person_uuid a 500 (max_query_size exceeded).
 */
function roomFor(query: string): Record<string, string> {
  const bytes = Buffer.byteLength(query)
  return bytes > DEFAULT_MAX_QUERY_SIZE / 2 ? { max_query_size: String(bytes + 4096) } : {}
}

/**
 * UTC months one insert may touch. The table is partitioned by month (in the server's time zone: a UTC month is at
 * most two of its months), and ClickHouse refuses an insert into more than 100 partitions: a single request of 101
 * sessions timed in 101 different months would otherwise be refused again and again, holding every later recording.
 */
export const MONTHS_PER_INSERT = 40

/** Rows in order, cut into inserts of at most MONTHS_PER_INSERT months of `first_timestamp` each. */
export function byFewMonths<T extends { first_timestamp: number }>(rows: T[]): T[][] {
  const parts: T[][] = []
  let part: T[] = []
  let months = new Set<number>()
  for (const row of rows) {
    const d = new Date(row.first_timestamp)
    const month = d.getUTCFullYear() * 12 + d.getUTCMonth()
    if (!months.has(month) && months.size === MONTHS_PER_INSERT) {
      parts.push(part)
      part = []
      months = new Set()
    }
    months.add(month)
    part.push(row)
  }
  if (part.length > 0) parts.push(part)
  return parts
}

/** A block's id: its content's hash (a retried write replaces itself; two processes never collide). */
function blockIdOf(w: BlockWrite): string {
  return new Bun.CryptoHasher('sha256').update(w.block.sessionId).update('\n').update(w.block.lines).digest('hex').slice(0, 32)
}

export class ClickHouseRecordingStore implements RecordingStore {
  private readonly client: ClickHouseClient
  private readonly ownsClient: boolean
  private readonly target: ClickHouseTarget
  private readonly cluster: string | undefined
  /** how this server deletes rows, learned from its version at the first deletion (null: not asked yet) */
  private method: EraseMethod | null = null

  /** `client`: one to use instead of one made from the URL (its owner closes it) */
  constructor(url: string, options: { cluster?: string; client?: ClickHouseClient } = {}) {
    this.target = parseClickHouseUrl(url)
    this.cluster = options.cluster
    this.ownsClient = !options.client
    this.client = options.client ?? createClient({
      url: this.target.url,
      username: this.target.username,
      password: this.target.password,
      request_timeout: 60_000,
      max_open_connections: 2,
      compression: { request: false, response: false },
      log: { level: ClickHouseLogLevel.OFF },
    })
  }

  /** Reads and writes go through the Distributed table in a cluster; deletions to the local one, ON CLUSTER. */
  private get table(): string {
    return `${this.target.database}.session_replay_blocks`
  }

  private async rows<T>(query: string): Promise<T[]> {
    const rs = await this.client.query({ query, format: 'JSONEachRow', clickhouse_settings: { ...replicaChoice(this.cluster), ...roomFor(query) } })
    return (await rs.json()) as T[]
  }

  /**
   * Nothing to wait for: the table exists once the event store migrated (services.ts opens it first), and the way to
   * delete is learned at the first deletion. Asking ClickHouse here made a service whose ClickHouse was down at boot
   * fail to start (the flush worker opens this store), where capture must go on logging events.
   */
  async init(): Promise<void> {}

  private async deletion(): Promise<EraseMethod> {
    if (this.method === null) {
      const [{ v }] = await this.rows<{ v: string }>('SELECT version() AS v')
      this.method = eraseMethod(v)
    }
    return this.method
  }

  async write(blocks: BlockWrite[]): Promise<void> {
    if (blocks.length === 0) return
    const values = blocks.map((w) => {
      const s = w.block.summary
      return {
        team_id: w.teamId,
        session_id: w.block.sessionId,
        block_id: blockIdOf(w),
        distinct_id: w.block.distinctId,
        first_timestamp: s.firstTimestamp,
        last_timestamp: s.lastTimestamp,
        first_url: s.firstUrl ?? '',
        click_count: s.clickCount,
        keypress_count: s.keypressCount,
        mouse_activity_count: s.mouseActivityCount,
        active_milliseconds: s.activeMs,
        first_activity: s.firstActivity ?? -1,
        last_activity: s.lastActivity ?? -1,
        console_log_count: s.consoleLogCount,
        console_warn_count: s.consoleWarnCount,
        console_error_count: s.consoleErrorCount,
        size: s.size,
        event_count: s.eventCount,
        snapshot_source: w.block.source,
        snapshot_library: w.block.library ?? '',
        lines: w.block.lines,
      }
    })
    for (const part of byFewMonths(values)) {
      await this.client.insert({
        table: this.table,
        values: part,
        format: 'JSONEachRow',
        // in a cluster, readable from any node once acknowledged
        clickhouse_settings: this.cluster ? { insert_distributed_sync: 1, ...replicaChoice(this.cluster) } : {},
      })
    }
  }

  private async sessions(teamId: number, where: string, having: string, tail: string): Promise<RecordingRow[]> {
    const rows = await this.rows<SessionRow>(`
        SELECT session_id,
               argMin(distinct_id, first_timestamp) AS owner,
               min(first_timestamp) AS first_ts, max(last_timestamp) AS last_ts,
               argMin(first_url, if(first_url = '', toInt64(9223372036854775807), first_timestamp)) AS url,
               sum(click_count) AS clicks, sum(keypress_count) AS keys, sum(mouse_activity_count) AS mouse,
               sum(active_milliseconds) AS active, groupArray((first_activity, last_activity, 0)) AS spans,
               sum(console_log_count) AS logs, sum(console_warn_count) AS warns, sum(console_error_count) AS errors,
               sum(size) AS bytes, sum(event_count) AS events, count() AS blocks,
               argMin(snapshot_source, first_timestamp) AS source, argMin(snapshot_library, first_timestamp) AS library
          FROM ${this.table} FINAL
         WHERE team_id = ${int(teamId)} ${where}
         GROUP BY session_id
        ${having ? `HAVING ${having}` : ''}
        ${tail}`)
    return rows.map((r) => fromRow(teamId, r))
  }

  async list(q: RecordingListQuery): Promise<RecordingRow[]> {
    const where: string[] = []
    const having: string[] = []
    if (q.distinctIds) {
      if (q.distinctIds.length === 0) return []
      where.push(`distinct_id IN (${q.distinctIds.map(stringLiteral).join(', ')})`)
    }
    if (q.dateFrom !== undefined) having.push(`first_ts >= ${int(q.dateFrom)}`)
    if (q.dateTo !== undefined) having.push(`first_ts < ${int(q.dateTo)}`)
    if (q.minDurationSeconds !== undefined) having.push(`last_ts - first_ts >= ${int(q.minDurationSeconds * 1000)}`)
    if (q.urlContains) having.push(`position(url, ${stringLiteral(q.urlContains)}) > 0`)
    return this.sessions(q.teamId, where.map((w) => `AND ${w}`).join(' '), having.join(' AND '), `ORDER BY first_ts DESC, session_id LIMIT ${int(q.limit)} OFFSET ${int(q.offset)}`)
  }

  async get(teamId: number, sessionId: string): Promise<RecordingRow | null> {
    const [row] = await this.sessions(teamId, `AND session_id = ${stringLiteral(sessionId)}`, '', '')
    return row ?? null
  }

  async sessionSizes(teamId: number, sessionIds: string[]): Promise<Map<string, number>> {
    if (sessionIds.length === 0) return new Map()
    const rows = await this.rows<{ session_id: string; bytes: string | number }>(
      `SELECT session_id, sum(size) AS bytes FROM ${this.table} FINAL
        WHERE team_id = ${int(teamId)} AND session_id IN (${sessionIds.map(stringLiteral).join(', ')})
        GROUP BY session_id`,
    )
    return new Map(rows.map((r) => [r.session_id, Number(r.bytes)]))
  }

  private async blockRows(teamId: number, sessionId: string, columns: string, tail = ''): Promise<Record<string, string | number>[]> {
    return this.rows(
      `SELECT ${columns} FROM ${this.table} FINAL
        WHERE team_id = ${int(teamId)} AND session_id = ${stringLiteral(sessionId)}
        ORDER BY first_timestamp, block_id ${tail}`,
    )
  }

  async blocks(teamId: number, sessionId: string, limit?: number): Promise<BlockInfo[]> {
    const rows = await this.blockRows(teamId, sessionId, 'first_timestamp, last_timestamp, size', limit === undefined ? '' : `LIMIT ${int(limit)}`)
    return rows.map((r) => ({ firstTimestamp: Number(r.first_timestamp), lastTimestamp: Number(r.last_timestamp), size: Number(r.size) }))
  }

  async lines(teamId: number, sessionId: string, from: number, to: number, maxBytes: number): Promise<{ text: string; complete: boolean }> {
    // sizes first: blocks past the budget are not even read
    const sizes = await this.blockRows(teamId, sessionId, 'block_id, size', `LIMIT ${int(to - from + 1)} OFFSET ${int(from)}`)
    let bytes = 0
    const wanted: string[] = []
    let complete = true
    for (const r of sizes) {
      if (bytes + Number(r.size) > maxBytes) {
        complete = false
        break
      }
      bytes += Number(r.size)
      wanted.push(String(r.block_id))
    }
    if (wanted.length === 0) return { text: '', complete }
    const rows = await this.blockRows(teamId, sessionId, 'lines', `LIMIT ${wanted.length} OFFSET ${int(from)}`)
    return { text: rows.map((r) => String(r.lines)).join(''), complete }
  }

  private async deleteWhere(where: string): Promise<void> {
    const storage = this.cluster ? 'session_replay_blocks_local' : 'session_replay_blocks'
    const table = `${this.target.database}.${storage}`
    const onCluster = this.cluster ? ` ON CLUSTER ${this.cluster}` : ''
    const method = await this.deletion()
    if (method === 'lightweight_delete') {
      await this.client.command({ query: `DELETE FROM ${table}${onCluster} WHERE ${where}`, clickhouse_settings: { lightweight_deletes_sync: '2' } })
    } else if (method === 'mutation_sync') {
      await this.client.command({ query: `ALTER TABLE ${table}${onCluster} DELETE WHERE ${where}`, clickhouse_settings: { mutations_sync: '2' } })
    } else {
      await this.client.command({ query: `ALTER TABLE ${table}${onCluster} DELETE WHERE ${where}` })
      await this.waitForMutations(storage)
    }
  }

  private async waitForMutations(storage: string): Promise<void> {
    const deadline = Date.now() + MUTATION_WAIT_MS
    for (let pause = 20; ; pause = Math.min(500, pause * 2)) {
      const rs = await this.client.query({
        query: `SELECT count() AS n FROM system.mutations WHERE database = ${stringLiteral(this.target.database)} AND table = ${stringLiteral(storage)} AND is_done = 0`,
        format: 'JSONEachRow',
      })
      const [{ n }] = (await rs.json()) as { n: string | number }[]
      if (Number(n) === 0) return
      if (Date.now() > deadline) throw new Error(`the deletion is still running in ClickHouse after ${MUTATION_WAIT_MS / 1000} s; it finishes in the background`)
      await Bun.sleep(pause)
    }
  }

  private async deleteSessions(teamId: number, sessionIds: string[]): Promise<void> {
    for (let i = 0; i < sessionIds.length; i += SESSIONS_PER_STATEMENT) {
      const ids = sessionIds.slice(i, i + SESSIONS_PER_STATEMENT).map(stringLiteral).join(', ')
      await this.deleteWhere(`team_id = ${int(teamId)} AND session_id IN (${ids})`)
    }
  }

  async delete(teamId: number, sessionId: string): Promise<boolean> {
    if (!(await this.get(teamId, sessionId))) return false
    await this.deleteSessions(teamId, [sessionId])
    return true
  }

  private async sessionIds(query: string): Promise<string[]> {
    return (await this.rows<{ session_id: string }>(query)).map((r) => r.session_id)
  }

  async deleteDistinctIds(teamId: number, distinctIds: string[]): Promise<number> {
    if (distinctIds.length === 0) return 0
    const ids = await this.sessionIds(
      `SELECT DISTINCT session_id FROM ${this.table} WHERE team_id = ${int(teamId)} AND distinct_id IN (${distinctIds.map(stringLiteral).join(', ')})`,
    )
    await this.deleteSessions(teamId, ids)
    return ids.length
  }

  async expire(cutoffOf: (teamId: number) => number): Promise<number> {
    let expired = 0
    for (const { team_id } of await this.rows<{ team_id: string | number }>(`SELECT DISTINCT team_id FROM ${this.table}`)) {
      const teamId = Number(team_id)
      const ids = await this.sessionIds(
        `SELECT session_id FROM ${this.table} WHERE team_id = ${int(teamId)} GROUP BY session_id HAVING max(last_timestamp) < ${int(cutoffOf(teamId))}`,
      )
      await this.deleteSessions(teamId, ids)
      expired += ids.length
    }
    return expired
  }

  async health(): Promise<boolean> {
    try {
      return (await this.client.ping()).success
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close()
  }
}
