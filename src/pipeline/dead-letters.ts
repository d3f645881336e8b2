// Events a consumer of the log could not handle for good (the event store refused them, or the learner's
// Postgres did), kept as JSON lines in DATA_DIR/dlq until replayed. Each line names the consumer, so a replay
// hands the event back to the one that failed it (README, "Poison events").
import { closeSync, existsSync, fdatasyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { StoredEvent } from '../events/store'

export interface DeadLetter {
  /** the consumer that failed the event: `store` (event store) or `learn` (persons, groups, definitions); older files have none (`store`) */
  consumer?: string
  reason: string
  error: string
  failed_at: string
  event: StoredEvent
}

export interface DeadLetterFile {
  file: string
  events: number
  bytes: number
  reasons: Record<string, number>
}

export class DeadLetters {
  constructor(readonly dir: string) {}

  write(rows: StoredEvent[], reason: string, error: string, consumer = 'store'): void {
    if (rows.length === 0) return
    mkdirSync(this.dir, { recursive: true })
    const at = new Date().toISOString()
    const lines = rows.map((event) => JSON.stringify({ consumer, reason, error, failed_at: at, event } satisfies DeadLetter)).join('\n')
    const fd = openSync(join(this.dir, `dlq-${at.slice(0, 10)}.jsonl`), 'a')
    try {
      writeSync(fd, `${lines}\n`)
      fdatasyncSync(fd)
    } finally {
      closeSync(fd)
    }
  }

  files(): string[] {
    if (!existsSync(this.dir)) return []
    return readdirSync(this.dir).filter((f) => /^dlq-.*\.jsonl$/.test(f)).sort()
  }

  read(file: string): DeadLetter[] {
    const text = readFileSync(join(this.dir, file), 'utf8')
    const out: DeadLetter[] = []
    for (const line of text.split('\n')) {
      if (!line) continue
      try {
        out.push(JSON.parse(line) as DeadLetter)
      } catch {
        // a torn last line from a crash while writing: nothing acknowledged depends on it
      }
    }
    return out
  }

  list(): DeadLetterFile[] {
    return this.files().map((file) => {
      const letters = this.read(file)
      const reasons: Record<string, number> = {}
      for (const l of letters) reasons[l.reason] = (reasons[l.reason] ?? 0) + 1
      return { file, events: letters.length, bytes: statSync(join(this.dir, file)).size, reasons }
    })
  }

  /** Mark a file as replayed (kept, renamed, so nothing is ever silently deleted). */
  retire(file: string): void {
    renameSync(join(this.dir, file), join(this.dir, `${file}.replayed-${Date.now()}`))
  }
}
