// The recordings API's reads and deletes, over the recording store and the persons in Postgres: run on an analytics
// thread (operations.ts), so that decompressing blocks and encoding answers never holds the serving thread.
import type { Sql } from 'postgres'
import { errors } from '../http/errors'
import { isoDate } from '../http/format'
import { TextAnswer } from '../http/offload'
import { LIST_PAGE_MAX_BYTES } from '../http/pagination'
import { personDistinctIds } from '../people/erasure-repository'
import { loadPersons } from '../people/repository'
import { projectRetentionDays } from './retention'
import type { RecordingRow, RecordingStore } from './store'

/** PostHog's limit on one snapshots request: 100 blocks. */
export const MAX_BLOCKS_PER_REQUEST = 100
/**
 * Sources one recording lists, its first blocks: a day of posthog-js flushing every 2 s is 43,200. A session sent
 * a million tiny requests made a 129 MB answer, 23 s and 640 MB of an analytics thread, before.
 */
export const MAX_SOURCES = 50_000
const DAY_MS = 86_400_000
/** A recording whose last event is this recent may still be recorded. */
const ONGOING_MS = 5 * 60 * 1000

export interface RecordingFilter {
  personUuid?: string
  distinctId?: string
  dateFrom?: number
  dateTo?: number
  minDurationSeconds?: number
  urlContains?: string
}

interface Person {
  id: string
  distinct_ids: string[]
  properties: Record<string, unknown>
}

export interface RecordingServiceDeps {
  store: RecordingStore
  sql: Sql
  defaultRetentionDays: number
  /** bytes of JSON lines one snapshots answer may hold */
  maxSnapshotBytes: number
}

export class RecordingService {
  constructor(private readonly deps: RecordingServiceDeps) {}

  private async retentionDays(teamId: number): Promise<number> {
    const days = await projectRetentionDays(this.deps.sql).catch(() => new Map<number, number>())
    return days.get(teamId) ?? this.deps.defaultRetentionDays
  }

  private async persons(teamId: number, distinctIds: string[]): Promise<Map<string, Person>> {
    const byId = new Map<string, Person>()
    // a NUL, which no person's distinct id holds, is a 400 from Postgres (recordings stored before /s/ replaced it)
    for (const p of await loadPersons(this.deps.sql, teamId, distinctIds.filter((id) => !id.includes('\0')))) {
      const person = { id: p.uuid, distinct_ids: [...p.distinctIds], properties: p.properties }
      for (const id of p.distinctIds) byId.set(id, person)
    }
    return byId
  }

  private item(r: RecordingRow, person: Person | null, retentionDays: number, now: number) {
    const duration = Math.max(0, r.lastTimestamp - r.firstTimestamp) / 1000
    const active = Math.min(duration, r.activeMs / 1000)
    return {
      id: r.sessionId,
      distinct_id: r.distinctId,
      viewed: false,
      recording_duration: Math.round(duration),
      active_seconds: Math.round(active),
      inactive_seconds: Math.round(duration - active),
      start_time: isoDate(r.firstTimestamp)!,
      end_time: isoDate(r.lastTimestamp)!,
      click_count: r.clickCount,
      keypress_count: r.keypressCount,
      mouse_activity_count: r.mouseActivityCount,
      console_log_count: r.consoleLogCount,
      console_warn_count: r.consoleWarnCount,
      console_error_count: r.consoleErrorCount,
      start_url: r.firstUrl,
      person,
      retention_period_days: retentionDays,
      expiry_time: isoDate(r.lastTimestamp + retentionDays * DAY_MS)!,
      storage: 'object_storage',
      snapshot_source: r.source,
      snapshot_library: r.library,
      event_count: r.eventCount,
      size: r.size,
      ongoing: now - r.lastTimestamp < ONGOING_MS,
    }
  }

  /** A page, newest first: PostHog's `{results, has_next, version}`, within the list's byte budget. */
  async list(teamId: number, filter: RecordingFilter, limit: number, offset: number) {
    let distinctIds: string[] | undefined
    if (filter.personUuid !== undefined) distinctIds = (await personDistinctIds(this.deps.sql, teamId, filter.personUuid)) ?? []
    if (filter.distinctId !== undefined) distinctIds = distinctIds ? distinctIds.filter((d) => d === filter.distinctId) : [filter.distinctId]
    const rows = await this.deps.store.list({ teamId, distinctIds, dateFrom: filter.dateFrom, dateTo: filter.dateTo, minDurationSeconds: filter.minDurationSeconds, urlContains: filter.urlContains, limit: limit + 1, offset })
    let hasNext = rows.length > limit
    const page = rows.slice(0, limit)
    const persons = await this.persons(teamId, [...new Set(page.map((r) => r.distinctId))])
    const days = await this.retentionDays(teamId)
    const now = Date.now()
    const results = []
    let bytes = 0
    for (const r of page) {
      const item = this.item(r, persons.get(r.distinctId) ?? null, days, now)
      bytes += JSON.stringify(item).length
      // a page of people with large properties stops early; has_next says there is more
      if (results.length > 0 && bytes > LIST_PAGE_MAX_BYTES) {
        hasNext = true
        break
      }
      results.push(item)
    }
    return { results, has_next: hasNext, version: 4 }
  }

  private async recording(teamId: number, sessionId: string): Promise<RecordingRow> {
    const row = await this.deps.store.get(teamId, sessionId)
    if (!row) throw errors.notFound('Recording not found.')
    return row
  }

  async get(teamId: number, sessionId: string) {
    const row = await this.recording(teamId, sessionId)
    const persons = await this.persons(teamId, [row.distinctId])
    return this.item(row, persons.get(row.distinctId) ?? null, await this.retentionDays(teamId), Date.now())
  }

  /** Step one of playback: the session's blocks, as PostHog's `blob_v2` sources. */
  async sources(teamId: number, sessionId: string) {
    await this.recording(teamId, sessionId)
    const blocks = await this.deps.store.blocks(teamId, sessionId, MAX_SOURCES)
    return {
      sources: blocks.map((b, i) => ({ source: 'blob_v2' as const, start_timestamp: isoDate(b.firstTimestamp)!, end_timestamp: isoDate(b.lastTimestamp)!, blob_key: String(i) })),
    }
  }

  /** Step two: blocks `start`..`end` as JSON lines `[windowId, event]`, the events as they were recorded. */
  async snapshots(teamId: number, sessionId: string, start: number, end: number): Promise<TextAnswer> {
    await this.recording(teamId, sessionId)
    if (end < start) throw errors.validation('invalid_input', 'end_blob_key must not be less than start_blob_key.', 'end_blob_key')
    if (end - start + 1 > MAX_BLOCKS_PER_REQUEST) throw errors.validation('invalid_input', `At most ${MAX_BLOCKS_PER_REQUEST} blocks in one request.`, 'end_blob_key')
    const { text, complete } = await this.deps.store.lines(teamId, sessionId, start, end, this.deps.maxSnapshotBytes)
    if (!complete && text === '') {
      throw errors.validation('answer_too_large', `Block ${start} alone is larger than ${this.deps.maxSnapshotBytes} bytes.`, 'start_blob_key')
    }
    if (!complete) throw errors.validation('answer_too_large', `Blocks ${start}–${end} hold more than ${this.deps.maxSnapshotBytes} bytes: ask for fewer at a time.`, 'end_blob_key')
    return new TextAnswer(text, 'application/jsonl')
  }

  async delete(teamId: number, sessionId: string): Promise<void> {
    if (!(await this.deps.store.delete(teamId, sessionId))) throw errors.notFound('Recording not found.')
  }
}
