// The embedded recording store: SQLite (bun:sqlite) in DATA_DIR/recordings.sqlite, whatever the event store. One
// row per session (its metadata, folded in as blocks arrive) and one row per block (its JSON lines, gzipped).
// Memory stays bounded: a block is written and read one at a time; SQLite's page cache is small. Several
// connections share the file (the flush worker writes, the analytics threads read, the serving thread deletes):
// WAL mode with a busy timeout.
import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { ACTIVITY_THRESHOLD_MS } from './metadata'
import type { BlockInfo, BlockWrite, RecordingListQuery, RecordingRow, RecordingStore } from './store'

const SCHEMA = [
  `create table if not exists recording_sessions (
     team_id integer not null, session_id text not null, distinct_id text not null,
     first_ts integer not null, last_ts integer not null, first_url text, first_url_ts integer,
     click_count integer not null default 0, keypress_count integer not null default 0,
     mouse_activity_count integer not null default 0, active_ms integer not null default 0, last_activity integer,
     console_log_count integer not null default 0, console_warn_count integer not null default 0,
     console_error_count integer not null default 0, size integer not null default 0,
     event_count integer not null default 0, block_count integer not null default 0,
     source text not null, library text,
     primary key (team_id, session_id)) without rowid`,
  'create index if not exists recording_sessions_start on recording_sessions (team_id, first_ts)',
  'create index if not exists recording_sessions_distinct on recording_sessions (team_id, distinct_id)',
  `create table if not exists recording_blocks (
     id integer primary key, team_id integer not null, session_id text not null, block_id text not null,
     first_ts integer not null, last_ts integer not null, size integer not null, data blob not null)`,
  'create unique index if not exists recording_blocks_key on recording_blocks (team_id, session_id, block_id)',
]

interface SessionRow {
  team_id: number
  session_id: string
  distinct_id: string
  first_ts: number
  last_ts: number
  first_url: string | null
  click_count: number
  keypress_count: number
  mouse_activity_count: number
  active_ms: number
  console_log_count: number
  console_warn_count: number
  console_error_count: number
  size: number
  event_count: number
  block_count: number
  source: string
  library: string | null
}

function fromRow(r: SessionRow): RecordingRow {
  return {
    teamId: r.team_id,
    sessionId: r.session_id,
    distinctId: r.distinct_id,
    firstTimestamp: r.first_ts,
    lastTimestamp: r.last_ts,
    firstUrl: r.first_url,
    clickCount: r.click_count,
    keypressCount: r.keypress_count,
    mouseActivityCount: r.mouse_activity_count,
    activeMs: r.active_ms,
    consoleLogCount: r.console_log_count,
    consoleWarnCount: r.console_warn_count,
    consoleErrorCount: r.console_error_count,
    size: r.size,
    eventCount: r.event_count,
    blockCount: r.block_count,
    source: r.source,
    library: r.library,
  }
}

/** LIKE's wildcards in a user's text taken literally. */
const likeLiteral = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** Sessions deleted per statement when expiring (a long delete would hold the writer). */
const EXPIRE_CHUNK = 500

export class SqliteRecordingStore implements RecordingStore {
  private db: Database | null = null

  constructor(private readonly file: string) {}

  private get conn(): Database {
    if (!this.db) throw new Error('recording store is not open')
    return this.db
  }

  async init(): Promise<void> {
    mkdirSync(dirname(this.file), { recursive: true })
    const db = new Database(this.file, { create: true })
    db.exec('pragma journal_mode = wal')
    db.exec('pragma busy_timeout = 10000')
    db.exec('pragma synchronous = normal')
    db.exec('pragma cache_size = -4096')
    for (const statement of SCHEMA) db.exec(statement)
    this.db = db
  }

  async write(blocks: BlockWrite[]): Promise<void> {
    if (blocks.length === 0) return
    const db = this.conn
    const insertBlock = db.query(
      'insert or ignore into recording_blocks (team_id, session_id, block_id, first_ts, last_ts, size, data) values (?, ?, ?, ?, ?, ?, ?)',
    )
    // folded into the session's row: sums, extremes, the earliest URL, and the active time joined across blocks
    const upsert = db.query(`
      insert into recording_sessions (team_id, session_id, distinct_id, first_ts, last_ts, first_url, first_url_ts,
          click_count, keypress_count, mouse_activity_count, active_ms, last_activity, console_log_count,
          console_warn_count, console_error_count, size, event_count, block_count, source, library)
      values ($team, $session, $distinct, $first, $last, $url, $urlTs, $clicks, $keys, $mouse, $active, $lastActivity,
          $log, $warn, $error, $size, $events, 1, $source, $library)
      on conflict (team_id, session_id) do update set
        first_ts = min(first_ts, excluded.first_ts),
        last_ts = max(last_ts, excluded.last_ts),
        first_url = case when excluded.first_url is not null and (first_url is null or excluded.first_url_ts < first_url_ts)
                         then excluded.first_url else first_url end,
        first_url_ts = case when excluded.first_url is not null and (first_url is null or excluded.first_url_ts < first_url_ts)
                         then excluded.first_url_ts else first_url_ts end,
        click_count = click_count + excluded.click_count,
        keypress_count = keypress_count + excluded.keypress_count,
        mouse_activity_count = mouse_activity_count + excluded.mouse_activity_count,
        active_ms = active_ms + excluded.active_ms
          + case when last_activity is not null and $firstActivity is not null
                      and $firstActivity - last_activity between 1 and ${ACTIVITY_THRESHOLD_MS}
                 then $firstActivity - last_activity else 0 end,
        last_activity = case when excluded.last_activity is null then last_activity
                             when last_activity is null then excluded.last_activity
                             else max(last_activity, excluded.last_activity) end,
        console_log_count = console_log_count + excluded.console_log_count,
        console_warn_count = console_warn_count + excluded.console_warn_count,
        console_error_count = console_error_count + excluded.console_error_count,
        size = size + excluded.size,
        event_count = event_count + excluded.event_count,
        block_count = block_count + 1`)
    db.transaction(() => {
      for (const { teamId, id, block } of blocks) {
        const s = block.summary
        const data = Bun.gzipSync(Buffer.from(block.lines), { level: 1 })
        // written before (a batch replayed after a crash): its metadata is already counted
        if (insertBlock.run(teamId, block.sessionId, id, s.firstTimestamp, s.lastTimestamp, s.size, data).changes === 0) continue
        upsert.run({
          $team: teamId,
          $session: block.sessionId,
          $distinct: block.distinctId,
          $first: s.firstTimestamp,
          $last: s.lastTimestamp,
          $url: s.firstUrl,
          $urlTs: s.firstTimestamp,
          $clicks: s.clickCount,
          $keys: s.keypressCount,
          $mouse: s.mouseActivityCount,
          $active: s.activeMs,
          $lastActivity: s.lastActivity,
          $firstActivity: s.firstActivity,
          $log: s.consoleLogCount,
          $warn: s.consoleWarnCount,
          $error: s.consoleErrorCount,
          $size: s.size,
          $events: s.eventCount,
          $source: block.source,
          $library: block.library,
        })
      }
    })()
  }

  async list(q: RecordingListQuery): Promise<RecordingRow[]> {
    const where = ['team_id = ?']
    const args: (string | number)[] = [q.teamId]
    if (q.distinctIds) {
      if (q.distinctIds.length === 0) return []
      where.push(`distinct_id in (select value from json_each(?))`)
      args.push(JSON.stringify(q.distinctIds))
    }
    if (q.dateFrom !== undefined) where.push('first_ts >= ?'), args.push(q.dateFrom)
    if (q.dateTo !== undefined) where.push('first_ts < ?'), args.push(q.dateTo)
    if (q.minDurationSeconds !== undefined) where.push('last_ts - first_ts >= ?'), args.push(q.minDurationSeconds * 1000)
    if (q.urlContains) where.push(`first_url like ? escape '\\'`), args.push(likeLiteral(q.urlContains))
    args.push(q.limit, q.offset)
    const rows = this.conn.query(`select * from recording_sessions where ${where.join(' and ')} order by first_ts desc, session_id limit ? offset ?`).all(...args) as SessionRow[]
    return rows.map(fromRow)
  }

  async get(teamId: number, sessionId: string): Promise<RecordingRow | null> {
    const row = this.conn.query('select * from recording_sessions where team_id = ? and session_id = ?').get(teamId, sessionId) as SessionRow | null
    return row ? fromRow(row) : null
  }

  async sessionSizes(teamId: number, sessionIds: string[]): Promise<Map<string, number>> {
    if (sessionIds.length === 0) return new Map()
    const rows = this.conn
      .query('select session_id, size from recording_sessions where team_id = ? and session_id in (select value from json_each(?))')
      .all(teamId, JSON.stringify(sessionIds)) as { session_id: string; size: number }[]
    return new Map(rows.map((r) => [r.session_id, r.size]))
  }

  async blocks(teamId: number, sessionId: string, limit = -1): Promise<BlockInfo[]> {
    const rows = this.conn
      .query('select first_ts, last_ts, size from recording_blocks where team_id = ? and session_id = ? order by id limit ?')
      .all(teamId, sessionId, limit) as { first_ts: number; last_ts: number; size: number }[]
    return rows.map((r) => ({ firstTimestamp: r.first_ts, lastTimestamp: r.last_ts, size: r.size }))
  }

  async lines(teamId: number, sessionId: string, from: number, to: number, maxBytes: number): Promise<{ text: string; complete: boolean }> {
    const ids = this.conn
      .query('select id, size from recording_blocks where team_id = ? and session_id = ? order by id limit ? offset ?')
      .all(teamId, sessionId, to - from + 1, from) as { id: number; size: number }[]
    const read = this.conn.query('select data from recording_blocks where id = ?')
    const parts: string[] = []
    let bytes = 0
    for (const { id, size } of ids) {
      // sizes first: a block that would pass the budget is not even decompressed
      if (bytes + size > maxBytes) return { text: parts.join(''), complete: false }
      const row = read.get(id) as { data: Uint8Array } | null
      if (!row) continue
      parts.push(Buffer.from(Bun.gunzipSync(row.data as Uint8Array<ArrayBuffer>)).toString("utf8"))
      bytes += size
    }
    return { text: parts.join(''), complete: true }
  }

  async delete(teamId: number, sessionId: string): Promise<boolean> {
    const db = this.conn
    return db.transaction(() => {
      db.query('delete from recording_blocks where team_id = ? and session_id = ?').run(teamId, sessionId)
      return db.query('delete from recording_sessions where team_id = ? and session_id = ?').run(teamId, sessionId).changes > 0
    })()
  }

  async deleteDistinctIds(teamId: number, distinctIds: string[]): Promise<number> {
    if (distinctIds.length === 0) return 0
    const sessions = this.conn
      .query('select session_id from recording_sessions where team_id = ? and distinct_id in (select value from json_each(?))')
      .all(teamId, JSON.stringify(distinctIds)) as { session_id: string }[]
    for (const { session_id } of sessions) await this.delete(teamId, session_id)
    return sessions.length
  }

  async expire(cutoffOf: (teamId: number) => number): Promise<number> {
    const teams = this.conn.query('select distinct team_id from recording_sessions').all() as { team_id: number }[]
    let expired = 0
    for (const { team_id } of teams) {
      const cutoff = cutoffOf(team_id)
      for (;;) {
        const sessions = this.conn
          .query('select session_id from recording_sessions where team_id = ? and last_ts < ? limit ?')
          .all(team_id, cutoff, EXPIRE_CHUNK) as { session_id: string }[]
        for (const { session_id } of sessions) await this.delete(team_id, session_id)
        expired += sessions.length
        if (sessions.length < EXPIRE_CHUNK) break
      }
    }
    return expired
  }

  async health(): Promise<boolean> {
    try {
      this.conn.query('select 1').get()
      return true
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    this.db?.close()
    this.db = null
  }
}
