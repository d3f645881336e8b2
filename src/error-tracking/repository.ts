// Issues and fingerprints in Postgres (sql/postgres/0023_error_tracking.sql). Every write of a project's issues (the
// flush worker's sightings, merge, split, status) holds the project's advisory lock, so a merge never races a batch
// that is making or touching one of its issues.
import type { Sql } from 'postgres'
import { asJson, inTransaction } from '../db/postgres'
import { wellFormedText } from '../db/text'
import { issueIdOf } from './fingerprint'

export const ISSUES_LOCK = 0x70_68_65_74 // "phet"

export type IssueStatus = 'active' | 'resolved' | 'suppressed'
export const ISSUE_STATUSES: readonly IssueStatus[] = ['active', 'resolved', 'suppressed']

export interface Assignee {
  type: 'user'
  id: number
}

export interface IssueRow {
  id: string
  teamId: number
  status: IssueStatus
  name: string | null
  description: string | null
  assignee: Assignee | null
  firstSeen: Date | null
  lastSeen: Date | null
  createdAt: Date
}

/** What one batch saw of one fingerprint. */
export interface Sighting {
  fingerprint: string
  /** the first exception's type and message: a new issue's name and description */
  name: string
  description: string
  /** event timestamps, ms */
  firstSeen: number
  lastSeen: number
  /** the latest time of receipt, ms (a resolved issue reopens for events received after it was resolved) */
  lastReceived: number
}

export interface SightingOutcome {
  created: number
  /** new fingerprints with no issue made: the project has its cap of issues */
  refused: number
  reopened: number
}

const ISSUE_COLUMNS = (sql: Sql) => sql`
  i.id, i.team_id as "teamId", i.status, i.name, i.description, i.assignee,
  i.first_seen as "firstSeen", i.last_seen as "lastSeen", i.created_at as "createdAt"`

/** Serialise the project's issue writes (inside a transaction). */
export async function lockIssues(tx: Sql, teamId: number): Promise<void> {
  await tx`select pg_advisory_xact_lock(${ISSUES_LOCK}, ${teamId})`
}

/** Fingerprints grouped into an issue other than the one derived from them (the flush worker's copy). */
export async function movedFingerprints(sql: Sql, limit: number): Promise<{ teamId: number; fingerprint: string; issueId: string }[]> {
  return sql<{ teamId: number; fingerprint: string; issueId: string }[]>`
    select team_id as "teamId", fingerprint, issue_id as "issueId" from error_tracking_fingerprints where moved limit ${limit}`
}

/** One batch's sightings of one project: new fingerprints make issues (up to the cap), seen times move, resolved issues seen again reopen. */
export async function recordSightings(sql: Sql, teamId: number, sightings: Sighting[], maxIssues: number): Promise<SightingOutcome> {
  const outcome: SightingOutcome = { created: 0, refused: 0, reopened: 0 }
  if (sightings.length === 0) return outcome
  await sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    await lockIssues(tx, teamId)
    const fingerprints = sightings.map((s) => s.fingerprint)
    const known = new Map(
      (await tx<{ fingerprint: string; issueId: string }[]>`
        select fingerprint, issue_id as "issueId" from error_tracking_fingerprints
         where team_id = ${teamId} and fingerprint = any(${fingerprints}::text[])`).map((r) => [r.fingerprint, r.issueId]),
    )
    const fresh = sightings.filter((s) => !known.has(s.fingerprint))
    if (fresh.length > 0) {
      const [{ count }] = await tx<{ count: number }[]>`select count(*)::int as count from error_tracking_issues where team_id = ${teamId}`
      const room = Math.max(0, maxIssues - count)
      const made = fresh.slice(0, room)
      outcome.refused = fresh.length - made.length
      if (made.length > 0) {
        const rows = made.map((s) => ({
          id: issueIdOf(teamId, s.fingerprint),
          fingerprint: s.fingerprint,
          name: wellFormedText(s.name),
          description: wellFormedText(s.description),
          first: new Date(s.firstSeen).toISOString(),
        }))
        const inserted = await tx`
          insert into error_tracking_issues (id, team_id, status, name, description, first_seen, last_seen)
          select v.id, ${teamId}, 'active', v.name, v.description, v.first, v.first
            from jsonb_to_recordset(${tx.json(asJson(rows))}) as v(id uuid, name text, description text, first timestamptz)
          on conflict (id) do nothing`
        outcome.created = inserted.count
        await tx`
          insert into error_tracking_fingerprints (team_id, fingerprint, issue_id, first_seen)
          select ${teamId}, v.fingerprint, v.id, v.first
            from jsonb_to_recordset(${tx.json(asJson(rows))}) as v(id uuid, fingerprint text, first timestamptz)
          on conflict (team_id, fingerprint) do nothing`
        for (const r of rows) known.set(r.fingerprint, r.id)
      }
    }
    // per issue: the earliest and latest event, the latest receipt
    const byIssue = new Map<string, { first: number; last: number; received: number }>()
    for (const s of sightings) {
      const id = known.get(s.fingerprint)
      if (!id) continue
      const seen = byIssue.get(id)
      if (!seen) byIssue.set(id, { first: s.firstSeen, last: s.lastSeen, received: s.lastReceived })
      else {
        seen.first = Math.min(seen.first, s.firstSeen)
        seen.last = Math.max(seen.last, s.lastSeen)
        seen.received = Math.max(seen.received, s.lastReceived)
      }
    }
    if (byIssue.size === 0) return
    const touched = [...byIssue].map(([id, s]) => ({ id, first: new Date(s.first).toISOString(), last: new Date(s.last).toISOString(), received: new Date(s.received).toISOString() }))
    const updated = await tx<{ reopened: boolean }[]>`
      with v as (select * from jsonb_to_recordset(${tx.json(asJson(touched))}) as v(id uuid, first timestamptz, last timestamptz, received timestamptz)),
      before as (select i.id, i.status = 'resolved' and (i.resolved_at is null or i.resolved_at < v.received) as reopens
                   from error_tracking_issues i join v on v.id = i.id where i.team_id = ${teamId} for update of i)
      update error_tracking_issues i set
        first_seen = least(coalesce(i.first_seen, v.first), v.first),
        last_seen = greatest(coalesce(i.last_seen, v.last), v.last),
        status = case when b.reopens then 'active' else i.status end
        from v join before b on b.id = v.id
       where i.id = v.id and i.team_id = ${teamId}
      returning b.reopens as reopened`
    outcome.reopened = updated.filter((r) => r.reopened).length
  })
  return outcome
}

export async function issuesOf(sql: Sql, teamId: number, ids: string[]): Promise<IssueRow[]> {
  if (ids.length === 0) return []
  return sql<IssueRow[]>`select ${ISSUE_COLUMNS(sql)} from error_tracking_issues i where i.team_id = ${teamId} and i.id = any(${ids}::uuid[])`
}

export async function issueOf(sql: Sql, teamId: number, id: string): Promise<IssueRow | null> {
  return (await issuesOf(sql, teamId, [id]))[0] ?? null
}

/** fingerprint → issue, for the fingerprints given (those with an issue). */
export async function issuesOfFingerprints(sql: Sql, teamId: number, fingerprints: string[]): Promise<Map<string, string>> {
  if (fingerprints.length === 0) return new Map()
  const rows = await sql<{ fingerprint: string; issueId: string }[]>`
    select fingerprint, issue_id as "issueId" from error_tracking_fingerprints where team_id = ${teamId} and fingerprint = any(${fingerprints}::text[])`
  return new Map(rows.map((r) => [r.fingerprint, r.issueId]))
}

export async function fingerprintsOf(sql: Sql, teamId: number, issueId: string, limit: number): Promise<string[]> {
  const rows = await sql<{ fingerprint: string }[]>`
    select fingerprint from error_tracking_fingerprints where team_id = ${teamId} and issue_id = ${issueId} order by first_seen, fingerprint limit ${limit}`
  return rows.map((r) => r.fingerprint)
}

export async function countIssues(sql: Sql, teamId: number): Promise<number> {
  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from error_tracking_issues where team_id = ${teamId}`
  return count
}

export interface IssueChanges {
  status?: IssueStatus
  assignee?: Assignee | null
  name?: string
  description?: string
}

export async function updateIssue(sql: Sql, teamId: number, id: string, changes: IssueChanges): Promise<boolean> {
  const given = (k: keyof IssueChanges) => Object.hasOwn(changes, k)
  let found = false
  await sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    await lockIssues(tx, teamId)
    const r = await tx`
      update error_tracking_issues set
        status = case when ${given('status')} then ${changes.status ?? 'active'}::text else status end,
        resolved_at = case when ${given('status')} and ${changes.status ?? ''}::text = 'resolved' then now() else resolved_at end,
        assignee = case when ${given('assignee')} then ${changes.assignee ? tx.json(asJson(changes.assignee)) : null}::jsonb else assignee end,
        name = case when ${given('name')} then ${changes.name ?? null}::text else name end,
        description = case when ${given('description')} then ${changes.description ?? null}::text else description end
       where team_id = ${teamId} and id = ${id}`
    found = r.count > 0
  })
  return found
}

/** Move the other issues' fingerprints to `into` and delete them. Ids not of this project are not touched. */
export async function mergeIssues(sql: Sql, teamId: number, into: string, others: string[]): Promise<{ merged: string[] } | null> {
  let merged: string[] | null = null
  await sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    await lockIssues(tx, teamId)
    const target = await tx`select 1 from error_tracking_issues where team_id = ${teamId} and id = ${into} for update`
    if (target.count === 0) return
    const found = await tx<{ id: string; firstSeen: Date | null; lastSeen: Date | null }[]>`
      select id, first_seen as "firstSeen", last_seen as "lastSeen" from error_tracking_issues
       where team_id = ${teamId} and id = any(${others}::uuid[]) and id <> ${into} for update`
    merged = found.map((r) => r.id)
    if (merged.length === 0) return
    const moved = await tx<{ fingerprint: string }[]>`
      update error_tracking_fingerprints set issue_id = ${into} where team_id = ${teamId} and issue_id = any(${merged}::uuid[]) returning fingerprint`
    await markMoved(tx, teamId, moved.map((r) => r.fingerprint), into)
    await tx`
      update error_tracking_issues i set
        first_seen = (select min(x) from unnest(array[i.first_seen, ${minDate(found.map((r) => r.firstSeen))}::timestamptz]) x),
        last_seen = (select max(x) from unnest(array[i.last_seen, ${maxDate(found.map((r) => r.lastSeen))}::timestamptz]) x)
       where i.team_id = ${teamId} and i.id = ${into}`
    await tx`delete from error_tracking_issues where team_id = ${teamId} and id = any(${merged}::uuid[])`
  })
  return merged === null ? null : { merged }
}

/** Each fingerprint given (of this issue) to an issue of its own; the new issues' ids. */
export async function splitIssue(sql: Sql, teamId: number, from: string, fingerprints: string[]): Promise<string[] | null> {
  let made: string[] | null = null
  await sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    await lockIssues(tx, teamId)
    const [source] = await tx<{ name: string | null; description: string | null }[]>`
      select name, description from error_tracking_issues where team_id = ${teamId} and id = ${from} for update`
    if (!source) return
    const mine = await tx<{ fingerprint: string; firstSeen: Date }[]>`
      select fingerprint, first_seen as "firstSeen" from error_tracking_fingerprints
       where team_id = ${teamId} and issue_id = ${from} and fingerprint = any(${fingerprints}::text[])`
    made = []
    for (const f of mine) {
      // the derived id when it is free (the fingerprint is then no longer "moved"), else a new one
      const derived = issueIdOf(teamId, f.fingerprint)
      const taken = derived === from || (await tx`select 1 from error_tracking_issues where id = ${derived}`).count > 0
      const id = taken ? crypto.randomUUID() : derived
      await tx`
        insert into error_tracking_issues (id, team_id, status, name, description, first_seen, last_seen)
        values (${id}, ${teamId}, 'active', ${source.name}, ${source.description}, ${f.firstSeen}, null)`
      await tx`update error_tracking_fingerprints set issue_id = ${id}, moved = ${id !== derived} where team_id = ${teamId} and fingerprint = ${f.fingerprint}`
      made.push(id)
    }
  })
  return made
}

async function markMoved(tx: Sql, teamId: number, fingerprints: string[], issueId: string): Promise<void> {
  const moved = fingerprints.filter((f) => issueIdOf(teamId, f) !== issueId)
  const home = fingerprints.filter((f) => issueIdOf(teamId, f) === issueId)
  if (moved.length) await tx`update error_tracking_fingerprints set moved = true where team_id = ${teamId} and fingerprint = any(${moved}::text[])`
  if (home.length) await tx`update error_tracking_fingerprints set moved = false where team_id = ${teamId} and fingerprint = any(${home}::text[])`
}

const minDate = (ds: (Date | null)[]) => ds.filter((d): d is Date => d !== null).sort((a, b) => a.getTime() - b.getTime())[0] ?? null
const maxDate = (ds: (Date | null)[]) => ds.filter((d): d is Date => d !== null).sort((a, b) => b.getTime() - a.getTime())[0] ?? null
