// `move`: the embedded stores of a stopped install into Postgres and ClickHouse (docs/operations.md "Moving to
// production"). Order: the target marked "move in progress"; the schema by the usual migrations on both; the
// metadata tables (parents first) and sequences; the events, batch by batch with their cursor saved; the person
// mapping ClickHouse's queries join with; the recordings; then every count compared, per table and per project. Only
// when all match is the move marked finished: until then a service refuses to start on the targets.
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client'
import { migratePostgres } from '../db/migrate'
import { openDatabase, type Database } from '../db/postgres'
import { ClickHouseEventStore } from '../events/clickhouse'
import { parseClickHouseUrl } from '../events/clickhouse-target'
import { silentLogger } from '../log'
import { ClickHouseMappingSink, PersonMappingCopy } from '../query/person-mapping'
import { ClickHouseRecordingStore } from '../replay/clickhouse-store'
import { clickHouseEventCounts, copyEvents } from './events'
import { beginMove, finishMove, saveCursor } from './marker'
import { alignSequences, compareCounts, copyTable, tableShapes } from './metadata'
import { clickHouseRecordingCounts, copyRecordings, sqliteRecordingCounts } from './recordings'
import { MoveRefused, openMoveSource, type MoveSource } from './source'

export interface MoveOptions {
  from: string
  databaseUrl: string
  clickhouseUrl: string
  clickhouseCluster?: string
  segmentBytes: number
  fsync: boolean
  /** a progress line (stderr in the CLI) */
  say(line: string): void
}

type CountCheck = { source: number; target: number; ok: boolean; by_project?: Record<string, { source: number; target: number }> }

function check(source: number, target: number, sourceByProject?: Record<string, number>, targetByProject?: Record<string, number>): CountCheck {
  const out: CountCheck = { source, target, ok: source === target }
  if (sourceByProject && targetByProject) {
    const byProject: Record<string, { source: number; target: number }> = {}
    for (const p of new Set([...Object.keys(sourceByProject), ...Object.keys(targetByProject)])) {
      const s = sourceByProject[p] ?? 0
      const t = targetByProject[p] ?? 0
      byProject[p] = { source: s, target: t }
      if (s !== t) out.ok = false
    }
    if (Object.keys(byProject).length > 0) out.by_project = byProject
  }
  return out
}

const record = (m: Map<number, number>) => Object.fromEntries([...m].map(([k, v]) => [String(k), v]))
const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0)

export async function runMove(options: MoveOptions) {
  const say = options.say
  const source = await openMoveSource(options.from, { segmentBytes: options.segmentBytes, fsync: options.fsync })
  let target: Database | undefined
  let client: ClickHouseClient | undefined
  let events: ClickHouseEventStore | undefined
  try {
    target = await openDatabase({ databaseUrl: options.databaseUrl, dataDir: options.from, poolMax: 2 })
    await migratePostgres(target.sql)
    const resumed = await beginTarget(target, source)
    if (resumed) say(`move: resuming the unfinished move begun ${resumed.startedAt.toISOString()}`)

    const ch = parseClickHouseUrl(options.clickhouseUrl)
    client = createClient({ url: ch.url, username: ch.username, password: ch.password, request_timeout: 120_000, max_open_connections: 2, log: { level: ClickHouseLogLevel.OFF } })
    events = new ClickHouseEventStore(options.clickhouseUrl, { cluster: options.clickhouseCluster, client })
    await events.init() // ClickHouse's migrations
    const recordings = new ClickHouseRecordingStore(options.clickhouseUrl, { cluster: options.clickhouseCluster, client })

    // metadata
    const shapes = await tableShapes(source.metadata.sql)
    for (const shape of shapes) {
      const rows = await copyTable(source.metadata.sql, target.sql, shape, () => undefined)
      if (rows > 0) say(`move: ${shape.name}: ${rows} rows`)
    }
    const sequences = await alignSequences(source.metadata.sql, target.sql)

    // events
    let lastSaid = 0
    const eventCopy = source.events
      ? await copyEvents({
          reader: source.events,
          store: events,
          client,
          database: ch.database,
          resumeAfter: resumed?.cursor ?? null,
          saveCursor: (cursor) => saveCursor(target!.sql, cursor),
          progress: ({ copied, total }) => {
            if (performance.now() - lastSaid < 2000 && copied < total) return
            lastSaid = performance.now()
            say(`move: events ${copied.toLocaleString('en')} / ${total.toLocaleString('en')}`)
          },
        })
      : { read: 0, written: 0, seconds: 0 }

    // who each distinct id is, where ClickHouse's queries join it (the service would backfill it too, later)
    const mapping = await new PersonMappingCopy(target.sql, new ClickHouseMappingSink(client, ch.database), silentLogger).pass()
    const blocks = await copyRecordings(source.recordingsFile, recordings, (n) => say(`move: recordings: ${n} blocks`))

    say('move: comparing counts')
    const report = {
      from: source.dataDir,
      to: { postgres: target.describe, clickhouse: `${ch.url}/${ch.database}` },
      resumed: resumed !== null,
      tables: Object.fromEntries(
        (await compareCounts(source.metadata.sql, target.sql, shapes)).map((c) => [c.table, check(c.source, c.target, c.bySourceProject, c.byTargetProject)]),
      ),
      sequences,
      events: await eventCounts(source, client, ch.database),
      recordings: recordingChecks(source.recordingsFile, await clickHouseRecordingCounts(client, ch.database)),
      this_run: {
        events_read: eventCopy.read,
        events_written: eventCopy.written,
        event_seconds: Math.round(eventCopy.seconds * 10) / 10,
        events_per_second: eventCopy.seconds > 0 ? Math.round(eventCopy.read / eventCopy.seconds) : 0,
        person_mapping_rows: mapping,
        recording_blocks: blocks,
      },
      ok: false,
      start_with: { DATABASE_URL: options.databaseUrl, CLICKHOUSE_URL: options.clickhouseUrl, ...(options.clickhouseCluster ? { CLICKHOUSE_CLUSTER: options.clickhouseCluster } : {}) },
    }
    report.ok = Object.values(report.tables).every((c) => c.ok) && report.events.ok && report.recordings.sessions.ok && report.recordings.blocks.ok
    if (report.ok) await finishMove(target.sql)
    return report
  } finally {
    await events?.close().catch(() => undefined)
    await client?.close().catch(() => undefined)
    await target?.close().catch(() => undefined)
    await source.close()
  }
}

/** Mark the target; a Postgres that holds data of its own (not from a move) is refused before anything is written. */
async function beginTarget(target: Database, source: MoveSource) {
  const [marker] = await target.sql<{ t: string | null }[]>`select to_regclass('public.embedded_moves')::text as t`
  if (!marker?.t) {
    const [used] = await target.sql`select 1 from organizations limit 1`
    if (used) {
      throw new MoveRefused(`the target Postgres (${target.describe}) already holds data of its own (organizations): a move writes only into a new database, or one a move wrote`)
    }
  }
  return beginMove(target.sql, source.dataDir)
}

async function eventCounts(source: MoveSource, client: ClickHouseClient, database: string): Promise<CountCheck> {
  const sourceCounts = source.events ? record(await source.events.countsByProject()) : {}
  const targetCounts = record(await clickHouseEventCounts(client, database))
  return check(sum(sourceCounts), sum(targetCounts), sourceCounts, targetCounts)
}

function recordingChecks(file: string, target: Awaited<ReturnType<typeof clickHouseRecordingCounts>>) {
  const s = sqliteRecordingCounts(file)
  return {
    sessions: check(sum(s.sessions), sum(target.sessions), s.sessions, target.sessions),
    blocks: check(sum(s.blocks), sum(target.blocks), s.blocks, target.blocks),
  }
}
