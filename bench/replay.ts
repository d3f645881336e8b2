// npm run bench -- replay: MB/s of session recordings posted to /s/ (gzipped, as posthog-js sends them) and stored
// on the embedded store, against a bare parse of the same bodies (gunzip + JSON.parse on one core); then the
// playback start of a 30-minute recording (its sources, then its first 10 blocks as JSON lines).
import { gzipSync, gunzipSync } from 'node:zlib'
import { spawnService } from '../test/helpers/spawn-service'
import { freshDataDir, PERSONAL_KEY, PROJECT_KEY } from '../test/helpers/stack'
import { SqliteRecordingStore } from '../src/replay/sqlite-store'

/** A posthog-js flush: a few seconds of rrweb events (mouse moves, clicks, inputs, a mutation), ~60 KB of JSON. */
function snapshotBody(sessionId: string, at: number): { body: Uint8Array; jsonBytes: number } {
  const events: Record<string, unknown>[] = []
  for (let i = 0; i < 120; i++) {
    const t = at + i * 20
    if (i % 3 === 0) events.push({ type: 3, data: { source: 1, positions: Array.from({ length: 8 }, (_, k) => ({ x: 100 + k + i, y: 200 + k, id: 42, timeOffset: -k * 10 })) }, timestamp: t })
    else if (i % 3 === 1) events.push({ type: 3, data: { source: 0, texts: [], attributes: [{ id: i, attributes: { class: `row row-${i} selected` } }], removes: [], adds: [{ parentId: 7, nextId: null, node: { type: 2, tagName: 'div', attributes: { class: 'cell' }, childNodes: [], id: 1000 + i } }] }, timestamp: t })
    else events.push({ type: 3, data: { source: i % 2 ? 2 : 5, type: 2, id: 9, x: 10, y: 20, text: 'hello world' }, timestamp: t })
  }
  const json = JSON.stringify([{ event: '$snapshot', properties: { $snapshot_data: events, $session_id: sessionId, $window_id: 'w-1', token: PROJECT_KEY, distinct_id: 'bench' } }])
  return { body: gzipSync(json), jsonBytes: Buffer.byteLength(json) }
}

export async function replayBench(seconds = 10): Promise<string> {
  const env = { DATA_DIR: await freshDataDir('embedded'), INIT_PROJECT_API_KEY: PROJECT_KEY, INIT_PERSONAL_API_KEY: PERSONAL_KEY, LOG_LEVEL: 'warn' }
  const bodies = Array.from({ length: 50 }, (_, i) => snapshotBody(`bench-${i}`, Date.now() + i))
  // the bare parse: what the same bodies cost to decode alone
  let bareBytes = 0
  const bareStart = performance.now()
  while (performance.now() - bareStart < 2000) for (const b of bodies) {
    JSON.parse(gunzipSync(b.body).toString())
    bareBytes += b.jsonBytes
  }
  const bareMbps = bareBytes / 2 ** 20 / ((performance.now() - bareStart) / 1000)

  const service = await spawnService(env)
  try {
    let sent = 0
    let sentBytes = 0
    let n = 0
    // made before the clock starts: the clients' own gzip is not what is measured
    const pool = Array.from({ length: 400 }, (_, i) => snapshotBody(`load-${i}`, Date.now() + i))
    const deadline = performance.now() + seconds * 1000
    const started = performance.now()
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < deadline) {
          const b = pool[n++ % pool.length]
          const r = await fetch(`${service.url}/s/`, { method: 'POST', body: b.body, headers: { 'content-type': 'text/plain' } })
          if (r.status === 200) {
            sent++
            sentBytes += b.jsonBytes
          }
        }
      }),
    )
    const acked = performance.now()
    const store = new SqliteRecordingStore(`${env.DATA_DIR}/recordings.sqlite`)
    await store.init()
    // stored: every acknowledged request is a block
    for (;;) {
      const rows = await store.list({ teamId: 1, limit: 100_000, offset: 0 })
      if (rows.reduce((s, r) => s + r.blockCount, 0) >= sent) break
      await Bun.sleep(100)
    }
    const stored = performance.now()
    const ackMbps = sentBytes / 2 ** 20 / ((acked - started) / 1000)
    const storedMbps = sentBytes / 2 ** 20 / ((stored - started) / 1000)

    // a 30-minute recording: a block every 2 s (900 blocks)
    for (let k = 0; k < 900; k += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => fetch(`${service.url}/s/`, { method: 'POST', body: snapshotBody('thirty-minutes', Date.now() + (k + j) * 2000).body })))
    }
    for (;;) {
      const r = await store.get(1, 'thirty-minutes')
      if (r && r.blockCount >= 900) break
      await Bun.sleep(100)
    }
    await store.close()
    const auth = { authorization: `Bearer ${PERSONAL_KEY}` }
    const t0 = performance.now()
    const sources = (await (await fetch(`${service.url}/api/projects/1/session_recordings/thirty-minutes/snapshots`, { headers: auth })).json()) as { sources: unknown[] }
    const first = await (await fetch(`${service.url}/api/projects/1/session_recordings/thirty-minutes/snapshots?source=blob_v2&start_blob_key=0&end_blob_key=9`, { headers: auth })).text()
    const playback = performance.now() - t0
    return [
      '### replay (embedded store, 8 clients, gzip bodies of ~60 KB JSON, 120 rrweb events each)',
      `- bare parse (gunzip + JSON.parse, one core): ${bareMbps.toFixed(1)} MB/s of JSON`,
      `- /s/ acknowledged: ${sent} requests, ${ackMbps.toFixed(1)} MB/s of JSON (${(ackMbps / bareMbps).toFixed(2)}× the bare parse)`,
      `- stored (every acknowledged block in recordings.sqlite): ${storedMbps.toFixed(1)} MB/s (${(storedMbps / bareMbps).toFixed(2)}×)`,
      `- playback start of a 30-minute recording (${sources.sources.length} blocks): sources + first 10 blocks (${(first.length / 1024).toFixed(0)} KB) in ${playback.toFixed(0)} ms`,
    ].join('\n')
  } finally {
    await service.stop()
  }
}
