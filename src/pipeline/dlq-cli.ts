// `npm run cli -- dlq list | dlq replay [--file NAME]`: inspect dead-lettered events and hand them back.
import { join } from 'node:path'
import type { Config } from '../config'
import type { EventStore, StoredEvent } from '../events/store'
import { DeadLetters } from './dead-letters'

const CHUNK = 1000

function progress(done: number, total: number, file: string): void {
  if (!process.stderr.isTTY && done !== total && done % (CHUNK * 10) !== 0) return
  const width = 30
  const filled = total === 0 ? width : Math.round((done / total) * width)
  process.stderr.write(`\r${file} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}${done === total ? '\n' : ''}`)
}

export async function dlqList(dataDir: string) {
  const files = new DeadLetters(join(dataDir, 'dlq')).list()
  return { files, events: files.reduce((n, f) => n + f.events, 0) }
}

/** Hands dead letters of the learner (persons, groups, definitions) back to it. */
export interface LearnerReplay {
  learn(rows: StoredEvent[]): Promise<void>
  close(): Promise<void>
}

export interface ReplayTargets {
  store(): Promise<EventStore>
  learner(): Promise<LearnerReplay>
}

/**
 * Rows in chunks, and one at a time where a chunk fails, so one bad row does not hold back the others.
 * `apply` returns the rows the target accepted without keeping (e.g. an INSERT OR IGNORE skipped them).
 */
async function replayRows(
  rows: StoredEvent[],
  apply: (chunk: StoredEvent[]) => Promise<StoredEvent[]>,
  keep: (row: StoredEvent, reason: string, error: string) => void,
  tick: (done: number) => void,
): Promise<number> {
  let replayed = 0
  const settle = (chunk: StoredEvent[], notKept: StoredEvent[]) => {
    for (const row of notKept) keep(row, 'not_kept_by_store', 'the store accepted the row but does not hold it')
    replayed += chunk.length - notKept.length
  }
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK)
    try {
      settle(chunk, await apply(chunk))
    } catch {
      for (const row of chunk) {
        try {
          settle([row], await apply([row]))
        } catch (e) {
          keep(row, 'replay_failed', (e as Error).message)
        }
      }
    }
    tick(Math.min(i + CHUNK, rows.length))
  }
  return replayed
}

/**
 * Hand dead letters back to the consumer that failed them (the event store, idempotently: rows already stored
 * are skipped; or the learner), counting as replayed only what landed. What fails again is written to a new
 * dead-letter file with the reason; the replayed file is retired (renamed, never deleted).
 */
export async function dlqReplay(dataDir: string, targets: ReplayTargets, only?: string) {
  const letters = new DeadLetters(join(dataDir, 'dlq'))
  const files = letters.files().filter((f) => !only || f === only)
  if (only && files.length === 0) throw new Error(`no dead-letter file named ${only}`)
  let store: EventStore | null = null
  let learner: LearnerReplay | null = null
  let replayed = 0
  let failed = 0
  try {
    for (const file of files) {
      const all = letters.read(file)
      const byConsumer = new Map<string, StoredEvent[]>()
      for (const l of all) {
        const consumer = l.consumer ?? 'store'
        const rows = byConsumer.get(consumer) ?? []
        rows.push(l.event)
        byConsumer.set(consumer, rows)
      }
      const kept: { row: StoredEvent; reason: string; error: string; consumer: string }[] = []
      let done = 0
      progress(0, all.length, file)
      for (const [consumer, rows] of byConsumer) {
        const keep = (row: StoredEvent, reason: string, error: string) => kept.push({ row, reason, error, consumer })
        const tick = (n: number) => progress(done + n, all.length, file)
        if (consumer === 'learn') {
          learner ??= await targets.learner()
          const l = learner
          replayed += await replayRows(rows, async (chunk) => (await l.learn(chunk), []), keep, tick)
        } else {
          store ??= await targets.store()
          const s = store
          replayed += await replayRows(
            rows,
            async (chunk) => {
              await s.insertBatch(chunk, { inDoubt: true })
              const held = await countHeld(s, chunk)
              return chunk.filter((r) => !held.has(r.uuid))
            },
            keep,
            tick,
          )
        }
        done += rows.length
      }
      // retired first: what failed again goes to today's file, which may be the one just replayed
      letters.retire(file)
      for (const k of kept) letters.write([k.row], k.reason, k.error, k.consumer)
      failed += kept.length
    }
  } finally {
    await store?.close()
    await learner?.close()
  }
  return { files: files.length, replayed, failed }
}

async function countHeld(store: EventStore, rows: StoredEvent[]): Promise<Set<string>> {
  const held = new Set<string>()
  const byTeam = new Map<number, string[]>()
  for (const r of rows) byTeam.set(r.teamId, [...(byTeam.get(r.teamId) ?? []), r.uuid])
  for (const [teamId, uuids] of byTeam) for (const uuid of (await store.countByUuid(teamId, uuids)).keys()) held.add(uuid)
  return held
}

export async function dlqCommand(action: 'list' | 'replay', options: { file?: string }, config: Config, targets: ReplayTargets) {
  if (action === 'list') return dlqList(config.DATA_DIR)
  return dlqReplay(config.DATA_DIR, targets, options.file)
}
