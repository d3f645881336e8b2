// npm run bench -- backup: a backup of an embedded install while it serves. BENCH_BACKUP_EVENTS events are loaded
// (default 200,000) into a service on EMBEDDED_EVENT_STORE (default duckdb); then capture (one event a request) and
// /decide are timed by two steady clients, first idle for as long as the backup then takes, then during
// `npm run -s cli -- backup`. Prints the backup's time and size and both p50/p99 pairs.
import { join } from 'node:path'
import { runCli, spawnService } from '../test/helpers/spawn-service'
import { freshDataDir, PERSONAL_KEY, PROJECT_KEY } from '../test/helpers/stack'
import { tempDir } from '../test/helpers/temp'

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN
}

async function probe(url: string, until: () => boolean): Promise<{ capture: number[]; decide: number[] }> {
  const capture: number[] = []
  const decide: number[] = []
  const loop = async (path: string, body: () => string, into: number[]) => {
    while (!until()) {
      const t0 = performance.now()
      const r = await fetch(`${url}${path}`, { method: 'POST', body: body(), headers: { 'content-type': 'application/json' } })
      await r.arrayBuffer()
      into.push(performance.now() - t0)
      await Bun.sleep(5)
    }
  }
  let i = 0
  await Promise.all([
    loop('/capture/', () => JSON.stringify({ api_key: PROJECT_KEY, event: 'probe', distinct_id: `p${i++ % 50}` }), capture),
    loop('/decide/?v=3', () => JSON.stringify({ api_key: PROJECT_KEY, distinct_id: `p${i++ % 50}` }), decide),
  ])
  return { capture, decide }
}

export async function backupBench(): Promise<string> {
  const events = Number(process.env.BENCH_BACKUP_EVENTS ?? 200_000)
  const store = process.env.EMBEDDED_EVENT_STORE ?? 'duckdb'
  const env = { DATA_DIR: await freshDataDir('embedded'), EMBEDDED_EVENT_STORE: store, INIT_PROJECT_API_KEY: PROJECT_KEY, INIT_PERSONAL_API_KEY: PERSONAL_KEY, LOG_LEVEL: 'warn' }
  const service = await spawnService(env)
  try {
    await fetch(`${service.url}/api/projects/@current/feature_flags/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'bench-flag', filters: { groups: [{ rollout_percentage: 50 }] } }),
    })
    const batch = 500
    for (let sent = 0; sent < events; sent += batch * 4) {
      await Promise.all(
        Array.from({ length: 4 }, (_, k) =>
          fetch(`${service.url}/batch/`, {
            method: 'POST',
            body: JSON.stringify({ api_key: PROJECT_KEY, batch: Array.from({ length: batch }, (_, j) => ({ event: 'load', distinct_id: `u${(sent + k * batch + j) % 5000}`, properties: { j, $current_url: 'https://example.com/x' } })) }),
          }).then((r) => r.arrayBuffer()),
        ),
      )
    }
    // wait for the flush to catch up
    for (;;) {
      const text = await (await fetch(`${service.url}/metrics`)).text()
      const lag = Number(/^pipeline_wal_unflushed_bytes (\S+)$/m.exec(text)?.[1] ?? 0)
      if (lag === 0) break
      await Bun.sleep(500)
    }
    const to = join(tempDir('phog-bench-backup-'), 'copy')
    let backingUp = true
    const during = probe(service.url, () => !backingUp)
    const t0 = performance.now()
    const result = await runCli(['backup', '--to', to], env)
    const seconds = (performance.now() - t0) / 1000
    backingUp = false
    const busy = await during
    if (result.code !== 0) throw new Error(`backup failed: ${result.stderr}`)
    const summary = JSON.parse(result.stdout) as { bytes: number; counts: { events: number } }
    const idleUntil = Date.now() + seconds * 1000
    const idle = await probe(service.url, () => Date.now() > idleUntil)
    const row = (name: string, a: number[], b: number[]) =>
      `| ${name} | ${quantile(a, 0.5).toFixed(1)} / ${quantile(a, 0.99).toFixed(1)} ms (${a.length}) | ${quantile(b, 0.5).toFixed(1)} / ${quantile(b, 0.99).toFixed(1)} ms (${b.length}) |`
    return [
      `### backup of an embedded install (${store}): ${summary.counts.events.toLocaleString('en')} events, ${(summary.bytes / 2 ** 20).toFixed(1)} MiB, ${seconds.toFixed(1)} s (the CLI's whole run)`,
      '',
      '| requests | idle p50 / p99 (n) | during the backup p50 / p99 (n) |',
      '|---|---|---|',
      row('capture (1 event)', idle.capture, busy.capture),
      row('/decide', idle.decide, busy.decide),
    ].join('\n')
  } finally {
    await service.stop()
  }
}

if (import.meta.main) process.stdout.write(`${await backupBench()}\n`)
