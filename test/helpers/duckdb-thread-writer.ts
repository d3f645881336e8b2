// A worker thread that writes events through DuckDbEventStore, as the flush worker does (event-store.duckdb.test.ts).
import { DuckDbEventStore } from '../../src/events/duckdb'
import type { StoredEvent } from '../../src/events/store'

declare const self: Worker

self.onmessage = async (e: MessageEvent<{ file: string; settings: { memoryMb: number; threads: number }; rows: StoredEvent[] }>) => {
  const store = new DuckDbEventStore(e.data.file, e.data.settings)
  try {
    await store.init()
    const written = [await store.insertBatch(e.data.rows, { inDoubt: false }), await store.insertBatch(e.data.rows, { inDoubt: true })]
    const counts = await store.countByUuid(e.data.rows[0].teamId, e.data.rows.map((r) => r.uuid))
    self.postMessage({ written, counted: counts.size })
  } catch (error) {
    self.postMessage({ written: [], counted: 0, error: (error as Error)?.stack ?? String(error) })
  } finally {
    await store.close()
  }
}
