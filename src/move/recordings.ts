// The session recordings' part of a move: every block of DATA_DIR/recordings.sqlite into ClickHouse's
// session_replay_blocks through the ClickHouse recording store's own write. SQLite keeps a block's JSON lines and
// folds its summary into the session's row; ClickHouse keeps a summary per block, so each block's is computed again
// from its lines (the lines are the same text, so the same summary). A block's id in ClickHouse is a hash of its
// session and lines: a block written again by a second run replaces itself (reads use FINAL).
import type { ClickHouseClient } from '@clickhouse/client'
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { blockOf } from '../replay/metadata'
import type { ClickHouseRecordingStore } from '../replay/clickhouse-store'
import type { BlockWrite } from '../replay/store'

const BATCH_BLOCKS = 200
const BATCH_BYTES = 16 * 1024 * 1024

export interface RecordingCounts {
  sessions: Record<string, number>
  blocks: Record<string, number>
}

interface BlockRow {
  id: number
  team_id: number
  session_id: string
  block_id: string
  data: Uint8Array
  distinct_id: string
  source: string
  library: string | null
}

/** The block its stored lines were made from (one window per block: blockOf's). */
function blockFrom(row: BlockRow): BlockWrite {
  const text = new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(row.data)))
  const events: Record<string, unknown>[] = []
  let windowId = ''
  for (const line of text.split('\n')) {
    if (line === '') continue
    const [window, event] = JSON.parse(line) as [string, Record<string, unknown>]
    windowId = window
    events.push(event)
  }
  const block = blockOf({ sessionId: row.session_id, windowId, distinctId: row.distinct_id, source: row.source, library: row.library, events })
  return { teamId: row.team_id, id: row.block_id, block }
}

export function sqliteRecordingCounts(file: string): RecordingCounts {
  const counts: RecordingCounts = { sessions: {}, blocks: {} }
  if (!existsSync(file)) return counts
  const db = new Database(file, { readonly: true })
  try {
    for (const r of db.query('SELECT team_id, count(*) AS n FROM recording_sessions GROUP BY team_id').all() as { team_id: number; n: number }[]) counts.sessions[r.team_id] = r.n
    for (const r of db.query('SELECT team_id, count(*) AS n FROM recording_blocks GROUP BY team_id').all() as { team_id: number; n: number }[]) counts.blocks[r.team_id] = r.n
  } finally {
    db.close()
  }
  return counts
}

export async function clickHouseRecordingCounts(client: ClickHouseClient, database: string): Promise<RecordingCounts> {
  const rs = await client.query({
    query: `SELECT team_id, toString(uniqExact(session_id)) AS sessions, toString(count()) AS blocks FROM ${database}.session_replay_blocks FINAL GROUP BY team_id`,
    format: 'JSONEachRow',
  })
  const counts: RecordingCounts = { sessions: {}, blocks: {} }
  for (const r of (await rs.json()) as { team_id: string | number; sessions: string; blocks: string }[]) {
    counts.sessions[String(r.team_id)] = Number(r.sessions)
    counts.blocks[String(r.team_id)] = Number(r.blocks)
  }
  return counts
}

/** Copy every block; returns how many. */
export async function copyRecordings(file: string, store: ClickHouseRecordingStore, progress: (blocks: number) => void): Promise<number> {
  if (!existsSync(file)) return 0
  const db = new Database(file, { readonly: true })
  try {
    const page = db.query(`
      SELECT b.id, b.team_id, b.session_id, b.block_id, b.data, s.distinct_id, s.source, s.library
        FROM recording_blocks b JOIN recording_sessions s ON s.team_id = b.team_id AND s.session_id = b.session_id
       WHERE b.id > ? ORDER BY b.id LIMIT ?`)
    let last = 0
    let copied = 0
    for (;;) {
      const rows = page.all(last, BATCH_BLOCKS) as BlockRow[]
      if (rows.length === 0) return copied
      let batch: BlockWrite[] = []
      let bytes = 0
      for (const row of rows) {
        const write = blockFrom(row)
        batch.push(write)
        bytes += write.block.lines.length
        if (bytes >= BATCH_BYTES) {
          await store.write(batch)
          batch = []
          bytes = 0
        }
      }
      await store.write(batch)
      copied += rows.length
      last = rows[rows.length - 1].id
      progress(copied)
    }
  } finally {
    db.close()
  }
}
