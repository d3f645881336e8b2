// A child process that runs query API statements on the embedded event store (read-only). A process, not a worker
// thread: SQLite's step loop cannot be stopped from JavaScript, and a terminated worker thread keeps computing until
// the statement ends; a process that overruns QUERY_TIMEOUT_MS, or whose client went away, is killed, and its work
// stops with it. Rows are read one at a time and counted: past the answer's byte budget the rest is not read.
import { Database } from 'bun:sqlite'

export interface SqliteQueryRequest {
  id: number
  sql: string
  params: (string | number)[]
  /** stop reading rows past this many bytes (a row's size: its text's length, 8 for a number) */
  maxBytes: number
}
export type SqliteQueryAnswer = { id: number; rows: unknown[][]; truncated: boolean } | { id: number; error: string; code: string }

function rowBytes(row: unknown[]): number {
  let n = 2
  for (const value of row) n += (typeof value === 'string' ? value.length + 3 : value instanceof Uint8Array ? value.byteLength * 2 : 8)
  return n
}

const file = process.argv[2]
let db: Database | undefined

process.on('message', (m: SqliteQueryRequest) => {
  try {
    db ??= new Database(file, { readonly: true })
    db.run('PRAGMA busy_timeout = 5000')
    const rows: unknown[][] = []
    let bytes = 0
    let truncated = false
    const statement = db.prepare(m.sql) // not db.query: its cache would hand the finalized statement back
    try {
      // rows come one at a time as objects, so by name: the compiled statements name every column uniquely
      const names = statement.columnNames
      if (new Set(names).size !== names.length) throw Object.assign(new Error('two result columns have the same name'), { code: 'SQLITE_ERROR' })
      for (const row of statement.iterate(...m.params) as IterableIterator<Record<string, unknown>>) {
        const values = names.map((name) => row[name])
        bytes += rowBytes(values)
        if (bytes > m.maxBytes) {
          truncated = true
          break
        }
        rows.push(values)
      }
    } finally {
      statement.finalize()
    }
    process.send!({ id: m.id, rows, truncated } satisfies SqliteQueryAnswer)
  } catch (error) {
    process.send!({ id: m.id, error: (error as Error)?.message ?? String(error), code: String((error as { code?: string })?.code ?? '') } satisfies SqliteQueryAnswer)
  }
})
// the parent going away ends this process
process.on('disconnect', () => process.exit(0))
