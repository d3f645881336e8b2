// Embedded store (PGlite, no DATABASE_URL): what fsync costs. The same work on a fresh service with
// EMBEDDED_PG_FSYNC=false (PGlite's default: -F, nothing synced) and true (the default: each commit waits for the
// disk), in the same run: flag writes through the REST API, one at a time, and the learner (persons and event
// and property definitions written to Postgres) on a backlog of events from new users.
import { rmSync } from 'node:fs'
import { metric, startService, table, tempDir } from './lib'

const PROJECT_KEY = 'phc_bench_embedded_key_0001'
const PERSONAL_KEY = 'phx_bench_embedded_key_0001'

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]
}

/** Events from `users` new people, each with its own properties: every one is work for the learner. */
function learnerBatch(from: number, count: number): string {
  return JSON.stringify({
    api_key: PROJECT_KEY,
    batch: Array.from({ length: count }, (_, i) => ({
      event: `event ${(from + i) % 50}`,
      distinct_id: `learner-${from + i}`,
      properties: { $set: { plan: i % 2 ? 'pro' : 'free', [`trait_${(from + i) % 200}`]: i }, [`prop_${(from + i) % 300}`]: 'x' },
    })),
  })
}

async function measure(fsync: boolean, flagWrites: number, learnerEvents: number) {
  const dir = tempDir('phog-bench-embedded-')
  const service = await startService({ DATA_DIR: dir, INIT_PROJECT_API_KEY: PROJECT_KEY, INIT_PERSONAL_API_KEY: PERSONAL_KEY, EMBEDDED_PG_FSYNC: String(fsync) })
  try {
    // flag writes, one after the other, as an admin or a script makes them
    const latencies: number[] = []
    const started = performance.now()
    for (let i = 0; i < flagWrites; i++) {
      const t0 = performance.now()
      const r = await fetch(`${service.url}/api/projects/@current/feature_flags/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ key: `bench-flag-${i}`, filters: { groups: [{ properties: [], rollout_percentage: 50 }] } }),
      })
      if (r.status !== 201) throw new Error(`flag write answered ${r.status}: ${await r.text()}`)
      latencies.push(performance.now() - t0)
    }
    const flagSeconds = (performance.now() - started) / 1000
    latencies.sort((a, b) => a - b)

    // the learner: a backlog of events from new users, accepted at once, learned into Postgres
    const perBatch = 100
    const learnStarted = performance.now()
    for (let from = 0; from < learnerEvents; from += perBatch) {
      const r = await fetch(`${service.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: learnerBatch(from, perBatch) })
      if (r.status !== 200) throw new Error(`batch answered ${r.status}`)
    }
    const deadline = performance.now() + 600_000
    while ((await metric(service.url, 'pipeline_backlog_records')) > 0 && performance.now() < deadline) await Bun.sleep(50)
    const learnSeconds = (performance.now() - learnStarted) / 1000
    return {
      flagsPerSecond: flagWrites / flagSeconds,
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      learnedPerSecond: learnerEvents / learnSeconds,
    }
  } finally {
    await service.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function embeddedBench(): Promise<string> {
  const flagWrites = Number(process.env.BENCH_FLAG_WRITES ?? 300)
  const learnerEvents = Number(process.env.BENCH_LEARNER_EVENTS ?? 20_000)
  // alternated rounds (off, on, off, on, …), each setting's median: a shared machine's drift falls on both
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
  const runs: Record<'off' | 'on', Awaited<ReturnType<typeof measure>>[]> = { off: [], on: [] }
  for (let i = 0; i < rounds; i++) {
    runs.off.push(await measure(false, flagWrites, learnerEvents))
    runs.on.push(await measure(true, flagWrites, learnerEvents))
  }
  const median = (list: Awaited<ReturnType<typeof measure>>[]) => {
    const pick = (key: keyof (typeof list)[0]) => list.map((m) => m[key]).sort((a, b) => a - b)[Math.floor(list.length / 2)]
    return { flagsPerSecond: pick('flagsPerSecond'), p50: pick('p50'), p95: pick('p95'), learnedPerSecond: pick('learnedPerSecond') }
  }
  const off = median(runs.off)
  const on = median(runs.on)
  const row = (name: string, m: typeof off) => ({
    'EMBEDDED_PG_FSYNC': name,
    'flag writes/s': Math.round(m.flagsPerSecond),
    'vs off': `${(m.flagsPerSecond / off.flagsPerSecond).toFixed(2)}x`,
    'write p50 ms': m.p50,
    'write p95 ms': m.p95,
    'learner events/s': Math.round(m.learnedPerSecond),
    'learner vs off': `${(m.learnedPerSecond / off.learnedPerSecond).toFixed(2)}x`,
  })
  return `### embedded store: ${flagWrites} flag writes one at a time; a backlog of ${learnerEvents} events from new users learned (persons, definitions); median of ${rounds} alternated rounds\n\n${table([row('false (-F: nothing synced)', off), row('true (default: commits wait for the disk)', on)])}\n`
}
