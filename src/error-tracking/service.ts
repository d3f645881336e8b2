// The issues API's work. Reads (list, one issue) run on an analytics thread (operations.ts): events are counted in
// the store by fingerprint, through the query service (the project's tenant condition, time limit, byte budget),
// and each fingerprint is given its issue from Postgres: an issue's events are its fingerprints' events, whatever
// issue id the stored event carries, so a merge or a split is right for past events too. Writes (status, assignee,
// merge, split) are Postgres only and stay on the serving thread.
import type { Sql } from 'postgres'
import { errors } from '../http/errors'
import { page, type Page } from '../http/pagination'
import { str } from '../lib/hogql-text'
import type { QueryService } from '../query/service'
import {
  fingerprintsOf, issueOf, issuesOf, issuesOfFingerprints, mergeIssues, splitIssue, updateIssue,
  type IssueChanges, type IssueRow, type IssueStatus,
} from './repository'

/** fingerprints counted in one list (a project has at most ERROR_TRACKING_MAX_ISSUES issues, most of one fingerprint) */
export const MAX_LISTED_FINGERPRINTS = 20_000
/** an issue's fingerprints read for its events (a merge of more counts only these) */
export const MAX_ISSUE_FINGERPRINTS = 1_000
/**
 * fingerprints named in one read (a manual fingerprint is up to 256 characters: ~50 KB of query text, within the
 * query API's 256 KB); more are read in several statements, and an issue's users and sessions are then the sum of
 * each statement's (an upper bound: a person in two of them counts twice)
 */
export const FINGERPRINTS_PER_READ = 200
/** fingerprints whose daily volume one list page reads (each issue's busiest first; 20 reads at most) */
export const MAX_PAGE_FINGERPRINTS = 4_000
/** days in a volume sparkline (a longer range shows its last days) */
export const MAX_VOLUME_DAYS = 92
const DAY = 86_400_000

export type IssueOrder = 'last_seen' | 'first_seen' | 'occurrences' | 'users' | 'sessions'

export interface IssueListParams {
  dateFrom: number
  dateTo: number
  /** statuses listed; 'all' for every one (default: active and resolved; suppressed issues are counted, not listed) */
  statuses: IssueStatus[]
  orderBy: IssueOrder
  limit: number
  offset: number
}

export interface Aggregations {
  occurrences: number
  users: number
  sessions: number
  /** events per UTC day over the range (at most MAX_VOLUME_DAYS, the last ones) */
  volumeRange: number[]
  volume_buckets: { label: string; value: number }[]
}

export interface IssueAnswer {
  id: string
  name: string | null
  description: string | null
  status: IssueStatus
  assignee: IssueRow['assignee']
  first_seen: string | null
  last_seen: string | null
  created_at: string
  aggregations: Aggregations
}

export interface IssueEvent {
  uuid: string
  distinct_id: string
  timestamp: string
  person_id: string | null
  properties: Record<string, unknown>
}

interface FingerprintCounts {
  fingerprint: string
  occurrences: number
  users: number
  sessions: number
  first: string
  last: string
}

const hogqlTime = (ms: number) => `toDateTime(${str(new Date(ms).toISOString().slice(0, 19).replace('T', ' '))})`
const FINGERPRINT = `properties.$exception_fingerprint`

function within(p: { dateFrom: number; dateTo: number }): string {
  return `event = '$exception' AND timestamp >= ${hogqlTime(Math.floor(p.dateFrom / 1000) * 1000)} AND timestamp < ${hogqlTime(Math.ceil(p.dateTo / 1000) * 1000)}`
}

const inList = (fingerprints: string[]) => `${FINGERPRINT} IN (${fingerprints.map(str).join(', ')})`

function days(p: { dateFrom: number; dateTo: number }): string[] {
  const first = Math.max(Math.floor(p.dateFrom / DAY), Math.floor((p.dateTo - 1) / DAY) - MAX_VOLUME_DAYS + 1)
  const out: string[] = []
  for (let d = first; d * DAY < p.dateTo; d++) out.push(new Date(d * DAY).toISOString().slice(0, 10))
  return out
}

function chunks<T>(items: T[], size = FINGERPRINTS_PER_READ): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v))

export class ErrorTrackingService {
  constructor(private readonly deps: { sql: Sql; query?: QueryService }) {}

  private get query(): QueryService {
    if (!this.deps.query) throw new Error('the issues API reads events on an analytics thread')
    return this.deps.query
  }

  /** Every fingerprint seen in the range with its counts. */
  private async countsByFingerprint(teamId: number, p: IssueListParams, signal?: AbortSignal): Promise<FingerprintCounts[]> {
    const answer = await this.query.run(
      teamId,
      `SELECT ${FINGERPRINT} AS fingerprint, count() AS occurrences, count(DISTINCT person_id) AS users, count(DISTINCT properties.$session_id) AS sessions,
              min(timestamp) AS first, max(timestamp) AS last
         FROM events WHERE ${within(p)} GROUP BY fingerprint ORDER BY occurrences DESC LIMIT ${MAX_LISTED_FINGERPRINTS}`,
      signal,
    )
    return answer.results
      .filter((r) => typeof r[0] === 'string' && r[0] !== '')
      .map((r) => ({ fingerprint: r[0] as string, occurrences: Number(r[1]), users: Number(r[2]), sessions: Number(r[3]), first: iso(r[4])!, last: iso(r[5])! }))
  }

  /** Users and sessions of one issue's fingerprints together (a person in two fingerprints counts once). */
  private async distinctOf(teamId: number, fingerprints: string[], p: { dateFrom: number; dateTo: number }, signal?: AbortSignal): Promise<{ users: number; sessions: number }> {
    const total = { users: 0, sessions: 0 }
    for (const chunk of chunks(fingerprints)) {
      const answer = await this.query.run(
        teamId,
        `SELECT count(DISTINCT person_id), count(DISTINCT properties.$session_id) FROM events WHERE ${within(p)} AND ${inList(chunk)}`,
        signal,
      )
      const row = answer.results[0] ?? [0, 0]
      total.users += Number(row[0])
      total.sessions += Number(row[1])
    }
    return total
  }

  /** Events per day of each issue (fingerprint → issue given). */
  private async volumes(teamId: number, issueOfFingerprint: Map<string, string>, p: { dateFrom: number; dateTo: number }, signal?: AbortSignal): Promise<Map<string, Map<string, number>>> {
    const out = new Map<string, Map<string, number>>()
    const fingerprints = [...issueOfFingerprint.keys()]
    if (fingerprints.length === 0) return out
    const labels = days(p)
    const from = Math.max(p.dateFrom, Date.parse(`${labels[0]}T00:00:00Z`))
    const rows: unknown[][] = []
    for (const chunk of chunks(fingerprints)) {
      const answer = await this.query.run(
        teamId,
        `SELECT ${FINGERPRINT} AS fingerprint, toStartOfDay(timestamp) AS day, count() FROM events
          WHERE ${within({ dateFrom: from, dateTo: p.dateTo })} AND ${inList(chunk)} GROUP BY fingerprint, day LIMIT ${MAX_LISTED_FINGERPRINTS}`,
        signal,
      )
      rows.push(...answer.results)
    }
    for (const [fingerprint, day, count] of rows) {
      const issue = issueOfFingerprint.get(String(fingerprint))
      if (!issue) continue
      let perDay = out.get(issue)
      if (!perDay) out.set(issue, (perDay = new Map()))
      const label = String(iso(day)).slice(0, 10)
      perDay.set(label, (perDay.get(label) ?? 0) + Number(count))
    }
    return out
  }

  /** A page of issues (`url`: the request's, for the page's links). */
  async list(teamId: number, p: IssueListParams, url: string, signal?: AbortSignal): Promise<Page<IssueAnswer>> {
    const counts = await this.countsByFingerprint(teamId, p, signal)
    const issueOfFingerprint = new Map<string, string>()
    for (let i = 0; i < counts.length; i += 1000) {
      const chunk = await issuesOfFingerprints(this.deps.sql, teamId, counts.slice(i, i + 1000).map((c) => c.fingerprint))
      for (const [f, issue] of chunk) issueOfFingerprint.set(f, issue)
    }
    // per issue: sums, the earliest and latest event, its fingerprints
    const byIssue = new Map<string, { occurrences: number; users: number; sessions: number; first: string; last: string; fingerprints: string[] }>()
    for (const c of counts) {
      const issue = issueOfFingerprint.get(c.fingerprint)
      if (!issue) continue // no issue (the project's cap): stored, not listed
      const a = byIssue.get(issue)
      if (!a) byIssue.set(issue, { ...c, fingerprints: [c.fingerprint] })
      else {
        a.occurrences += c.occurrences
        a.users += c.users
        a.sessions += c.sessions
        if (c.first < a.first) a.first = c.first
        if (c.last > a.last) a.last = c.last
        a.fingerprints.push(c.fingerprint)
      }
    }
    const rows = new Map<string, IssueRow>()
    const ids = [...byIssue.keys()]
    for (let i = 0; i < ids.length; i += 1000) for (const r of await issuesOf(this.deps.sql, teamId, ids.slice(i, i + 1000))) rows.set(r.id, r)
    const statuses = new Set(p.statuses)
    const listed = ids.filter((id) => rows.has(id) && statuses.has(rows.get(id)!.status))
    const key = (id: string): number | string => {
      const a = byIssue.get(id)!
      return p.orderBy === 'first_seen' ? a.first : p.orderBy === 'last_seen' ? a.last : a[p.orderBy]
    }
    listed.sort((x, y) => {
      const a = key(x)
      const b = key(y)
      return a < b ? 1 : a > b ? -1 : x < y ? -1 : 1
    })
    const shown = listed.slice(p.offset, p.offset + p.limit)
    // exact distinct counts where an issue has several fingerprints (sums would count a person twice)
    for (const id of shown) {
      const a = byIssue.get(id)!
      // (past one read's worth, the sums stand: an upper bound)
      if (a.fingerprints.length > 1 && a.fingerprints.length <= FINGERPRINTS_PER_READ) Object.assign(a, await this.distinctOf(teamId, a.fingerprints, p, signal))
    }
    // each issue's busiest fingerprints first (counts came most frequent first), then the next of each, up to the bound
    const pageFingerprints = new Map<string, string>()
    for (let rank = 0; pageFingerprints.size < MAX_PAGE_FINGERPRINTS; rank++) {
      let added = false
      for (const id of shown) {
        const f = byIssue.get(id)!.fingerprints[rank]
        if (f === undefined || pageFingerprints.size >= MAX_PAGE_FINGERPRINTS) continue
        pageFingerprints.set(f, id)
        added = true
      }
      if (!added) break
    }
    const volumes = await this.volumes(teamId, pageFingerprints, p, signal)
    const labels = days(p)
    const results = shown.map((id) => {
      const a = byIssue.get(id)!
      return this.answer(rows.get(id)!, { occurrences: a.occurrences, users: a.users, sessions: a.sessions }, labels, volumes.get(id), a.first, a.last)
    })
    return page(new URL(url), listed.length, p.limit, p.offset, results)
  }

  private answer(row: IssueRow, counts: { occurrences: number; users: number; sessions: number }, labels: string[], perDay: Map<string, number> | undefined, first: string | null, last: string | null): IssueAnswer {
    const volume = labels.map((label) => ({ label, value: perDay?.get(label) ?? 0 }))
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      status: row.status,
      assignee: row.assignee,
      // over every event (Postgres), else what the range saw
      first_seen: iso(row.firstSeen) ?? first,
      last_seen: maxIso(iso(row.lastSeen), last),
      created_at: iso(row.createdAt)!,
      aggregations: { ...counts, volumeRange: volume.map((v) => v.value), volume_buckets: volume },
    }
  }

  /** One issue with its counts over the range and its latest events (with their stacks). */
  async get(teamId: number, id: string, range: { dateFrom: number; dateTo: number }, eventLimit: number, signal?: AbortSignal): Promise<IssueAnswer & { fingerprints: string[]; events: IssueEvent[] }> {
    const row = await issueOf(this.deps.sql, teamId, id)
    if (!row) throw errors.notFound('Issue not found.')
    const fingerprints = await fingerprintsOf(this.deps.sql, teamId, id, MAX_ISSUE_FINGERPRINTS)
    if (fingerprints.length === 0) return { ...this.answer(row, { occurrences: 0, users: 0, sessions: 0 }, days(range), undefined, null, null), fingerprints, events: [] }
    let occurrences = 0
    let users = 0
    let sessions = 0
    let first: string | null = null
    let last: string | null = null
    const latestRows: unknown[][] = []
    for (const chunk of chunks(fingerprints)) {
      const totals = await this.query.run(
        teamId,
        `SELECT count(), count(DISTINCT person_id), count(DISTINCT properties.$session_id), min(timestamp), max(timestamp) FROM events WHERE ${within(range)} AND ${inList(chunk)}`,
        signal,
      )
      const [n, u, se, f, l] = totals.results[0] ?? [0, 0, 0, null, null]
      if (Number(n) === 0) continue
      occurrences += Number(n)
      users += Number(u)
      sessions += Number(se)
      if (first === null || iso(f)! < first) first = iso(f)
      if (last === null || iso(l)! > last) last = iso(l)
      if (eventLimit === 0) continue
      const latest = await this.query.run(
        teamId,
        `SELECT uuid, distinct_id, timestamp, person_id, properties FROM events WHERE ${within(range)} AND ${inList(chunk)} ORDER BY timestamp DESC LIMIT ${eventLimit}`,
        signal,
      )
      latestRows.push(...latest.results)
    }
    const volumes = await this.volumes(teamId, new Map(fingerprints.map((f) => [f, id])), range, signal)
    latestRows.sort((a, b) => (String(iso(b[2])) < String(iso(a[2])) ? -1 : 1))
    const events = latestRows.slice(0, eventLimit).map(([uuid, distinctId, timestamp, personId, properties]) => ({
      uuid: String(uuid),
      distinct_id: String(distinctId),
      timestamp: iso(timestamp)!,
      person_id: personId === null || personId === undefined ? null : String(personId),
      properties: (typeof properties === 'string' ? JSON.parse(properties) : properties) as Record<string, unknown>,
    }))
    return {
      ...this.answer(row, { occurrences, users, sessions }, days(range), volumes.get(id), first, last),
      fingerprints,
      events,
    }
  }

  async update(teamId: number, id: string, changes: IssueChanges): Promise<IssueRow> {
    if (!(await updateIssue(this.deps.sql, teamId, id, changes))) throw errors.notFound('Issue not found.')
    return (await issueOf(this.deps.sql, teamId, id))!
  }

  async merge(teamId: number, id: string, ids: string[]): Promise<{ success: true; merged: string[] }> {
    const done = await mergeIssues(this.deps.sql, teamId, id, ids)
    if (!done) throw errors.notFound('Issue not found.')
    return { success: true, merged: done.merged }
  }

  async split(teamId: number, id: string, fingerprints: string[]): Promise<{ success: true; new_issue_ids: string[] }> {
    const made = await splitIssue(this.deps.sql, teamId, id, fingerprints)
    if (!made) throw errors.notFound('Issue not found.')
    return { success: true, new_issue_ids: made }
  }
}

function maxIso(a: string | null, b: string | null): string | null {
  if (a === null) return b
  if (b === null) return a
  return a > b ? a : b
}
