// A worker thread that runs the embedded event store's read queries on its own read-only connection (SQLite's
// WAL lets it read while the flush worker writes). An events-API filter that walks half a million rows takes a
// few hundred milliseconds; here that blocks this thread, not the one that answers every other request.
import { Database } from 'bun:sqlite'

declare const self: Worker

export interface ReadRequest {
  id: number
  sql: string
  params: (string | number)[]
}

export type ReadAnswer = { id: number; rows: unknown[] } | { id: number; error: string; code: string }

let db: Database | undefined

self.onmessage = (event: MessageEvent<{ file: string } | ReadRequest>) => {
  const m = event.data
  if ('file' in m) {
    db = new Database(m.file, { readonly: true })
    db.run('PRAGMA busy_timeout = 5000')
    return
  }
  try {
    const rows = db!.query(m.sql).all(...m.params)
    self.postMessage({ id: m.id, rows } satisfies ReadAnswer)
  } catch (error) {
    self.postMessage({ id: m.id, error: (error as Error)?.message ?? String(error), code: String((error as { code?: string })?.code ?? '') } satisfies ReadAnswer)
  }
}
