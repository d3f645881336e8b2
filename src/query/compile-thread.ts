// The query compiler on a thread of its own. Parsing and compiling are linear and bounded (budget.ts), yet the
// largest accepted query still takes milliseconds, and tens of them the first time, before the JIT has warmed to
// it: on a thread of its own, that time is never taken from capture, /decide or /_health. The same function runs
// on the caller's thread when no thread is given (compileHere).
import { compileQuery, type CompiledQuery, type Target, type ValueType } from './compile'
import { Params, type DialectName } from './dialect'
import { QueryDeadlineError, QueryError, QueryLimitError, type QueryLimit } from './errors'
import { parseQuery } from './parser'

export interface CompileRequest {
  text: string
  target: Omit<Target, 'deadline'>
  /** Date.now() past which compiling stops (the threads' performance.now() clocks differ) */
  deadline: number
}

export type CompileAnswer = (
  | { compiled: { sql: string; sqlite: (string | number)[]; clickhouse: Record<string, string>; columns: string[]; types: ValueType[]; limit: number; offset: number } }
  | { refused: 'query' | 'deadline'; message: string; limit?: QueryLimit }
  | { failed: { message: string; stack?: string } }
) & { /** milliseconds spent parsing and compiling */ ms: number }

/** Parse and compile, every outcome as plain data (it crosses threads). */
export function compileHere(request: CompileRequest): CompileAnswer {
  const started = performance.now()
  const deadline = started + (request.deadline - Date.now())
  const ms = () => performance.now() - started
  try {
    const c = compileQuery(parseQuery(request.text, { deadline }), { ...request.target, deadline })
    const compiled = { sql: c.sql, sqlite: c.params.sqlite, clickhouse: c.params.clickhouse, columns: c.columns, types: c.types, limit: c.limit, offset: c.offset }
    return { compiled, ms: ms() }
  } catch (error) {
    if (error instanceof QueryError) return { refused: 'query', message: error.message, limit: error instanceof QueryLimitError ? error.limit : undefined, ms: ms() }
    if (error instanceof QueryDeadlineError) return { refused: 'deadline', message: error.message, ms: ms() }
    const e = error as Error
    return { failed: { message: e?.message ?? String(error), stack: e?.stack }, ms: ms() }
  }
}

/** The compiled query again, with its parameters, on the thread that runs it. */
export function compiledQuery(dialect: DialectName, c: Extract<CompileAnswer, { compiled: unknown }>['compiled']): CompiledQuery {
  const params = new Params(dialect)
  params.sqlite.push(...c.sqlite)
  Object.assign(params.clickhouse, c.clickhouse)
  return { sql: c.sql, params, columns: c.columns, types: c.types, limit: c.limit, offset: c.offset }
}

const THREAD = new URL('./compile-worker.ts', import.meta.url)

/** One worker thread, started at the first query; compiles queue on it in order. */
export class CompileThread {
  private worker: Worker | undefined
  private readonly waiting = new Map<number, (answer: CompileAnswer) => void>()
  private next = 0

  compile(request: CompileRequest): Promise<CompileAnswer> {
    const worker = (this.worker ??= this.start())
    const id = this.next++
    return new Promise((resolve) => {
      this.waiting.set(id, resolve)
      worker.postMessage({ id, request })
    })
  }

  close(): void {
    this.worker?.terminate()
    this.worker = undefined
    this.failAll('the compiler thread was closed')
  }

  private start(): Worker {
    const worker = new Worker(THREAD.href)
    worker.unref()
    worker.onmessage = ({ data }: MessageEvent<{ id: number; answer: CompileAnswer }>) => {
      const resolve = this.waiting.get(data.id)
      this.waiting.delete(data.id)
      resolve?.(data.answer)
    }
    worker.onerror = (event) => {
      // the thread is gone: what waited on it fails (a 500, logged), the next query starts another
      if (this.worker === worker) this.worker = undefined
      worker.terminate()
      this.failAll(`the compiler thread failed: ${event.message}`)
    }
    return worker
  }

  private failAll(message: string): void {
    for (const resolve of this.waiting.values()) resolve({ failed: { message }, ms: 0 })
    this.waiting.clear()
  }
}
