// One rule for every consumer of the log: a batch its store refuses while the store is answering is narrowed
// down, by halves, to the events that fail; those are dead-lettered with the consumer's name and the reason,
// and the consumer moves on. A store that is down is never bisected: the batch waits, with backoff, in the log.
import type { CapturedEvent } from '../capture/normalize'
import { connectionFailure } from './failure-reason'
import type { LoggedRecord } from './ring'
import type { Batch, BatchHandler } from './consumer'

/** An event of a batch, with the record it came in (its project and time of receipt). */
export interface BatchEvent {
  record: LoggedRecord
  event: CapturedEvent
}

/** Where isolated events go: the dead-letter file, in the consumer's name. */
export type PoisonSink = (consumer: string, events: BatchEvent[], reason: string, error: unknown) => void

/** How often a lone event is tried before it is called poison: a passing glitch gets a second chance. */
const LONE_EVENT_ATTEMPTS = 3

/**
 * The events of a batch as sub-batches the handler can take. Records that carried no events (every one was
 * dropped) ride with the first sub-batch, so that what they count is counted once.
 */
function subBatch(items: BatchEvent[], empties: LoggedRecord[]): Batch {
  const records: LoggedRecord[] = [...empties]
  let current: LoggedRecord | null = null
  let bytes = 0
  for (const { record, event } of items) {
    if (current === null || current.seq !== record.seq) {
      // the first slice of a record carries its drop counts; later slices carry none
      const first = record.events[0] === event
      current = { ...record, events: [], dropped: first ? record.dropped : new Map() }
      records.push(current)
      if (first) bytes += record.size
    }
    current.events.push(event)
  }
  const seqs = records.map((r) => r.seq)
  const itemCount = items.length + records.reduce((n, r) => n + [...r.dropped.values()].reduce((a, b) => a + b, 0), 0)
  return { records, firstSeq: Math.min(...seqs), lastSeq: Math.max(...seqs), events: items.length, items: itemCount, bytes }
}

export function batchEvents(batch: Batch): { items: BatchEvent[]; empties: LoggedRecord[] } {
  const items: BatchEvent[] = []
  const empties: LoggedRecord[] = []
  for (const record of batch.records) {
    if (record.events.length === 0) empties.push(record)
    for (const event of record.events) items.push({ record, event })
  }
  return { items, empties }
}

export interface IsolationDeps {
  handler: BatchHandler
  /** the store refused this data for certain (a parse or constraint error), whatever a ping says */
  isDefinite(error: unknown): boolean
  /** the store answers its ping now */
  storeAnswers(): Promise<boolean>
  poison: PoisonSink
}

/** Between tries of a lone event whose failure is not a definite rejection. */
const RETRY_PAUSE_MS = 200

/**
 * Handle the batch by halves until every event is either handled or isolated as poison. A definite rejection
 * is narrowed down at once. Any other failure counts against the data only once the store has shown it works
 * (part of this very batch went in, and it answers its ping): a store that answers pings before it can take
 * inserts (ClickHouse loading its tables) must not turn a whole batch into dead letters. Otherwise this throws,
 * leaving the whole batch to be retried, in doubt.
 */
export async function isolatePoison(batch: Batch, deps: IsolationDeps): Promise<number> {
  const { items, empties } = batchEvents(batch)
  let isolated = 0
  let somethingWentIn = false
  /** Is this failure the data's fault? Certainly if the store says so; otherwise only once the store has shown it works. */
  const dataAtFault = async (error: unknown) => deps.isDefinite(error) || (somethingWentIn && (await deps.storeAnswers()))
  const attempt = async (part: BatchEvent[], withEmpties: LoggedRecord[]): Promise<unknown> => {
    try {
      await deps.handler.handle(subBatch(part, withEmpties), true)
      somethingWentIn = true
      return null
    } catch (error) {
      return error ?? new Error('handler failed')
    }
  }
  const settle = async (part: BatchEvent[], withEmpties: LoggedRecord[]): Promise<void> => {
    if (part.length === 0 && withEmpties.length === 0) return
    const error = await attempt(part, withEmpties)
    if (error === null) return
    if (part.length > 1) {
      const half = Math.ceil(part.length / 2)
      const [first, second] = [part.slice(0, half), part.slice(half)]
      if (!(await dataAtFault(error))) {
        // Not yet known whether the data or the store is at fault: if neither half goes in, it is the store.
        const firstFailed = await attempt(first, withEmpties)
        const secondFailed = await attempt(second, [])
        if (firstFailed !== null && secondFailed !== null) throw error
        if (firstFailed !== null) await settle(first, withEmpties)
        if (secondFailed !== null) await settle(second, [])
        return
      }
      await settle(first, withEmpties)
      await settle(second, [])
      return
    }
    let last: unknown = error
    for (let tries = 1; tries < LONE_EVENT_ATTEMPTS; tries++) {
      if (!(await dataAtFault(last))) throw last
      if (!deps.isDefinite(last)) await Bun.sleep(RETRY_PAUSE_MS)
      last = await attempt(part, withEmpties)
      if (last === null) return
    }
    if (!(await dataAtFault(last))) throw last
    deps.poison(deps.handler.name, part, reasonOf(last), last)
    isolated += part.length
    // what came with it (drop counts of empty records) still needs handling
    if (withEmpties.length > 0) await settle([], withEmpties)
  }
  await settle(items, empties)
  return isolated
}

/**
 * A short machine-friendly reason: `unreachable` or `timeout` when the store could not be reached or did not
 * answer in time (failure-reason.ts), else the SQLSTATE or store code where there is one.
 */
export function reasonOf(error: unknown): string {
  const connection = connectionFailure(error)
  if (connection) return connection
  const e = error as { code?: unknown; reason?: unknown } | null
  if (e && typeof e.reason === 'string') return e.reason
  if (e && (typeof e.code === 'string' || typeof e.code === 'number')) return `rejected_${e.code}`
  return 'rejected_by_store'
}
