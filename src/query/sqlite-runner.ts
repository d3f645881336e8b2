// Query API statements on the embedded event store, in child processes (sqlite-process.ts): at most `concurrency`
// at once, shared fairly between projects (slots.ts), the wait counting against the query's time. A statement
// that overruns its time, or whose client went away, is stopped by killing its process; its rows are read up to
// the answer's byte budget there, so a large answer never crosses to this process whole.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { CompiledQuery } from './compile'
import { Params, type DialectName } from './dialect'
import { mappedPersonIds, OWN_STATEMENT_BYTES, QueryRunError, type QueryRunner, type RunOptions, type RunResult } from './runner'
import { FairSlots } from './slots'
import type { SqliteQueryAnswer, SqliteQueryRequest } from './sqlite-process'
import { StatementStop } from './statement-stop'
import { resultTooLarge, sqliteRunError } from './store-errors'

const SQLITE_PROCESS = fileURLToPath(new URL('./sqlite-process.ts', import.meta.url))

interface Child {
  process: ReturnType<typeof Bun.spawn>
  waiting: Map<number, (answer: SqliteQueryAnswer) => void>
}

export class SqliteQueryRunner implements QueryRunner {
  private readonly idle: Child[] = []
  private readonly all = new Set<Child>()
  private readonly slots: FairSlots
  private next = 0
  private closed = false

  constructor(
    private readonly file: string,
    concurrency = 2,
  ) {
    this.slots = new FairSlots(concurrency)
  }

  async dialect(): Promise<DialectName> {
    return 'sqlite'
  }

  slotUse() {
    return this.slots.use()
  }

  private spawn(): Child {
    const waiting = new Map<number, (answer: SqliteQueryAnswer) => void>()
    const child: Child = {
      waiting,
      process: Bun.spawn({
        cmd: [process.execPath, SQLITE_PROCESS, this.file],
        stdio: ['ignore', 'ignore', 'inherit'],
        ipc: (message: SqliteQueryAnswer) => {
          waiting.get(message.id)?.(message)
          waiting.delete(message.id)
        },
        serialization: 'json',
      }),
    }
    this.all.add(child)
    void child.process.exited.then(() => {
      this.all.delete(child)
      for (const done of waiting.values()) done({ id: -1, error: 'the query process ended', code: 'EXITED' })
      waiting.clear()
    })
    return child
  }

  async run(query: CompiledQuery, options: RunOptions): Promise<RunResult> {
    if (this.closed) throw new QueryRunError('The query runner is closed', 'unavailable')
    if (!existsSync(this.file)) return { rows: [], truncated: false }
    const maxBytes = options.maxBytes ?? OWN_STATEMENT_BYTES
    const deadline = Date.now() + options.timeoutMs
    const release = await this.slots.acquire(options.teamId, deadline, options.signal)
    let child: ReturnType<SqliteQueryRunner['spawn']>
    try {
      child = this.idle.pop() ?? this.spawn()
    } catch (error) {
      release() // a process that could not start holds no slot
      throw new QueryRunError('The query process could not start', 'unavailable', error)
    }
    const id = ++this.next
    const stop = new StatementStop(options, deadline, () => child.process.kill('SIGKILL'))
    try {
      const answer = await new Promise<SqliteQueryAnswer>((resolve) => {
        child.waiting.set(id, resolve)
        if (!stop.reason) child.process.send({ id, sql: query.sql, params: query.params.sqlite, maxBytes } satisfies SqliteQueryRequest)
      })
      const stopped = stop.error()
      if (stopped) throw stopped
      if ('error' in answer) {
        if (answer.code === 'EXITED') throw new QueryRunError('The query process ended unexpectedly', 'unavailable')
        throw sqliteRunError(answer.error, answer.code)
      }
      if (answer.truncated && answer.rows.length === 0) throw resultTooLarge(maxBytes)
      return { rows: answer.rows, truncated: answer.truncated }
    } finally {
      stop.done()
      if (!stop.reason && !this.closed && child.process.exitCode === null && !child.process.killed) this.idle.push(child)
      release()
    }
  }

  personIds(teamId: number, distinctIds: string[]): Promise<Map<string, string>> {
    return mappedPersonIds(this, 'sqlite', teamId, distinctIds)
  }

  async close(): Promise<void> {
    this.closed = true
    this.idle.length = 0
    // running statements too: nothing of this runner outlives it
    for (const child of this.all) child.process.kill('SIGKILL')
    this.all.clear()
  }
}
