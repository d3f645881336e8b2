// `npm run cli -- dlq list | dlq replay [--file NAME]`: inspect and re-insert dead-lettered events.
import { join } from 'node:path'
import type { Config } from '../config'
import type { EventStore } from '../events/store'
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

/** Insert dead letters again (idempotently: rows already stored are skipped); retire files that fully land. */
export async function dlqReplay(dataDir: string, store: EventStore, only?: string) {
  const letters = new DeadLetters(join(dataDir, 'dlq'))
  const files = letters.files().filter((f) => !only || f === only)
  if (only && files.length === 0) throw new Error(`no dead-letter file named ${only}`)
  let replayed = 0
  let failed = 0
  for (const file of files) {
    const rows = letters.read(file).map((l) => l.event)
    let fileFailed = 0
    progress(0, rows.length, file)
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK)
      try {
        await store.insertBatch(chunk, { inDoubt: true })
        replayed += chunk.length
      } catch (error) {
        // one at a time, so one bad row does not hold back the others
        for (const row of chunk) {
          try {
            await store.insertBatch([row], { inDoubt: true })
            replayed++
          } catch (e) {
            letters.write([row], 'replay_failed', (e as Error).message)
            fileFailed++
          }
        }
      }
      progress(Math.min(i + CHUNK, rows.length), rows.length, file)
    }
    failed += fileFailed
    letters.retire(file)
  }
  return { files: files.length, replayed, failed }
}

export async function dlqCommand(action: string | undefined, options: { file?: string }, config: Config, openStore: () => Promise<EventStore>) {
  if (action === 'list') return dlqList(config.DATA_DIR)
  if (action === 'replay') {
    const store = await openStore()
    try {
      return await dlqReplay(config.DATA_DIR, store, options.file)
    } finally {
      await store.close()
    }
  }
  throw new Error('usage: dlq list | dlq replay [--file NAME]')
}
