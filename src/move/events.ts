// The events' part of a move: each project's events into ClickHouse through the ClickHouse event store's own insert
// (the rows are exactly what phog writes there), a batch at a time, the cursor saved in the target Postgres after
// each batch. A project that already had events in ClickHouse when this run began (a second run, or the resumption
// of a killed one) is copied "in doubt": the store leaves out the uuids already there, so nothing is doubled.
import type { ClickHouseClient } from '@clickhouse/client'
import type { ClickHouseEventStore } from '../events/clickhouse'
import type { EmbeddedEventReader } from './event-source'
import type { EventCursor } from './marker'

export const EVENT_BATCH = 10_000

export interface EventProgress {
  copied: number
  written: number
  total: number
}

export interface EventCopyResult {
  read: number
  written: number
  seconds: number
}

/** Events per project in the target (every row counted: a duplicate would show). */
export async function clickHouseEventCounts(client: ClickHouseClient, database: string): Promise<Map<number, number>> {
  const rs = await client.query({ query: `SELECT team_id, toString(count()) AS n FROM ${database}.events GROUP BY team_id`, format: 'JSONEachRow' })
  return new Map(((await rs.json()) as { team_id: string | number; n: string }[]).map((r) => [Number(r.team_id), Number(r.n)]))
}

export async function copyEvents(options: {
  reader: EmbeddedEventReader
  store: ClickHouseEventStore
  client: ClickHouseClient
  database: string
  /** where a killed run stopped (its batches before are in ClickHouse) */
  resumeAfter: EventCursor | null
  saveCursor(cursor: EventCursor): Promise<void>
  progress(p: EventProgress): void
}): Promise<EventCopyResult> {
  const started = performance.now()
  const sourceCounts = await options.reader.countsByProject()
  const targetAtStart = await clickHouseEventCounts(options.client, options.database)
  const total = [...sourceCounts.values()].reduce((a, b) => a + b, 0)
  const teams = [...sourceCounts.keys()].sort((a, b) => a - b)
  const resume = options.resumeAfter
  let copied = 0
  let written = 0
  for (const teamId of teams) {
    if (resume && teamId < resume.teamId) {
      copied += sourceCounts.get(teamId) ?? 0 // moved by the run that was stopped
      continue
    }
    const after = resume && teamId === resume.teamId ? resume : null
    const inDoubt = (targetAtStart.get(teamId) ?? 0) > 0
    for await (const batch of options.reader.batches(teamId, after, EVENT_BATCH)) {
      written += await options.store.insertBatch(batch, { inDoubt })
      copied += batch.length
      const last = batch[batch.length - 1]
      await options.saveCursor({ teamId, timestamp: last.timestamp, uuid: last.uuid })
      options.progress({ copied, written, total })
    }
  }
  return { read: copied, written, seconds: (performance.now() - started) / 1000 }
}
