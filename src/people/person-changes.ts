// Which persons and groups a batch of learning changed, told to every process that caches them
// (person-cache.ts): a NOTIFY per change, sent inside the learner's transaction so it arrives at commit.
// A NOTIFY payload is at most 8000 bytes: a change is split over several, and one too large to list
// (a backfill touching thousands of persons) becomes "forget the whole project".
import type { Sql } from 'postgres'
import type { PersonChange } from './person-cache'

export const PERSON_CHANGES_CHANNEL = 'person_changes'
const PAYLOAD_MAX = 7900
/** beyond this many bytes of ids, listing them costs more than re-reading the project's hot persons */
const LISTED_MAX = 64_000

export function encodePersonChange(change: PersonChange): string[] {
  const listed = change.distinctIds.reduce((n, id) => n + id.length + 3, 0) + change.groups.reduce((n, g) => n + g[1].length + 8, 0)
  const deleted = change.deleted ? { x: 1 } : {}
  if (change.all || listed > LISTED_MAX) return [JSON.stringify({ t: change.teamId, all: true, ...deleted })]
  const payloads: string[] = []
  let ids: string[] = []
  let groups: [number, string][] = []
  let size = 0
  const flush = () => {
    if (ids.length || groups.length) payloads.push(JSON.stringify({ t: change.teamId, d: ids, g: groups, ...deleted }))
    ids = []
    groups = []
    size = 0
  }
  // JSON escapes can grow a character to 6 bytes (\u0000): sizes are counted pessimistically
  for (const id of change.distinctIds) {
    const cost = Buffer.byteLength(JSON.stringify(id)) + 1
    if (size + cost > PAYLOAD_MAX - 64) flush()
    ids.push(id)
    size += cost
  }
  for (const g of change.groups) {
    const cost = Buffer.byteLength(JSON.stringify(g)) + 1
    if (size + cost > PAYLOAD_MAX - 64) flush()
    groups.push(g)
    size += cost
  }
  flush()
  return payloads
}

export function decodePersonChange(payload: string): PersonChange | null {
  try {
    const m = JSON.parse(payload) as { t?: unknown; all?: unknown; d?: unknown; g?: unknown; x?: unknown }
    if (!Number.isSafeInteger(m.t)) return null
    const deleted = m.x === 1 ? { deleted: true } : {}
    if (m.all === true) return { teamId: m.t as number, distinctIds: [], groups: [], all: true, ...deleted }
    const distinctIds = Array.isArray(m.d) ? m.d.filter((id): id is string => typeof id === 'string') : []
    const groups = Array.isArray(m.g)
      ? m.g.filter((g): g is [number, string] => Array.isArray(g) && Number.isInteger(g[0]) && typeof g[1] === 'string')
      : []
    return { teamId: m.t as number, distinctIds, groups, ...deleted }
  } catch {
    return null
  }
}

/** Inside the transaction that wrote the change: delivered to listeners when it commits, not before. */
export async function notifyPersonChange(tx: Sql, change: PersonChange): Promise<void> {
  for (const payload of encodePersonChange(change)) await tx`select pg_notify(${PERSON_CHANGES_CHANNEL}, ${payload})`
}

/** Hear every process's changes; `onGap` when the connection was lost and notifications may have been missed. */
export async function listenPersonChanges(
  sql: Sql,
  onChange: (change: PersonChange) => void,
  onGap: () => void,
): Promise<() => Promise<void>> {
  let first = true
  const subscription = await sql.listen(
    PERSON_CHANGES_CHANNEL,
    (payload) => {
      const change = decodePersonChange(payload)
      if (change) onChange(change)
    },
    () => {
      if (!first) onGap()
      first = false
    },
  )
  return () => subscription.unlisten()
}
