// npm run bench -- multicore: one service process against several sharing one port (REUSE_PORT=true, one per core),
// all on the same real Postgres 15 and ClickHouse. Each process has its own DATA_DIR: a DATA_DIR (its write-ahead
// log, its dead letters) belongs to one live process, which a second one on it refuses to start beside. wrk loads,
// in interleaved turns (the order rotating each round): /decide?v=3 with the 50 bench flags (overrides; returning
// users), /batch/ with the flush running (every acknowledged event stored before the next turn), and bare Bun
// servers (one process; as many with SO_REUSEPORT) with the same bodies. One process on the embedded stores takes
// its turns too: where its CPU goes, thread by thread, says what a second core does for it. Per process: its CPU in
// each turn, its RSS idle and at peak, and what its own /metrics says it holds (reached through the shared port by
// fresh connections, told apart by process_start_time_seconds).
// BENCH_SECONDS each turn, BENCH_ROUNDS rounds (3), BENCH_PROCESSES processes sharing the port (2).
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { startClickHouse } from '../test/helpers/clickhouse-server'
import { startPostgres } from '../test/helpers/postgres-server'
import { freePort, spawnService, type ServiceProcess } from '../test/helpers/spawn-service'
import { KEY, PERSONAL, VARIANTS, benchFlags, decideBodies, returningBodies, setUp } from './decide'
import { KEY as INGEST_KEY, ONE_PROJECT, batchBody } from './ingest'
import { rssMb, sampler, startBaseline, table, tempDir, waitHealthy, wrk } from './lib'

const CONNECTIONS = 32
const TICKS_PER_SECOND = 100 // Linux's USER_HZ: /proc's CPU times are in these

interface Target {
  name: string
  processes: number
  url: string
  pids: number[]
  /** events in its event store (the service; undefined for a bare server) */
  storedEvents?: () => Promise<number>
  stop(): Promise<void>
}

interface Workload {
  name: string
  path: string
  bodies: string[]
  ingest: boolean
  bare: { one: Target; many: Target }
}

/** The bare server of bench/baseline-server.ts, but sharing its port (SO_REUSEPORT) with its siblings. */
const BARE_SHARED = `
const [mode, port] = [process.argv[2], Number(process.argv[3])]
const server = Bun.serve({ port, hostname: '127.0.0.1', reusePort: true, async fetch(request) {
  const text = await request.text()
  if (mode === 'echo') return Response.json({ featureFlags: {}, echo: JSON.parse(text).distinct_id })
  JSON.parse(text)
  return new Response('{"status":1}', { headers: { 'content-type': 'application/json' } })
} })
process.stdout.write(server.port + '\\n')
`

async function startBareShared(mode: 'echo' | 'parse', processes: number, dir: string): Promise<Target> {
  const script = join(dir, 'bare-shared.ts')
  writeFileSync(script, BARE_SHARED)
  const port = await freePort()
  const procs = Array.from({ length: processes }, () => Bun.spawn([process.execPath, 'run', script, mode, String(port)], { stdout: 'pipe', stderr: 'inherit' }))
  // each prints its port once it listens: the shared port's health check could be answered by any of them
  await Promise.all(procs.map(async (p) => (await p.stdout.getReader().read()).value ?? Promise.reject(new Error('a bare server exited'))))
  const url = `http://127.0.0.1:${port}`
  await waitHealthy(url, '/')
  const stop = async () => {
    for (const p of procs) p.kill('SIGKILL')
    await Promise.all(procs.map((p) => p.exited))
  }
  return { name: `bare Bun.serve ${mode}, ${processes} processes`, processes, url, pids: procs.map((p) => p.pid), stop }
}

async function startBare(mode: 'echo' | 'parse'): Promise<Target> {
  const bare = await startBaseline(mode)
  return { name: `bare Bun.serve ${mode}, 1 process`, processes: 1, url: bare.url, pids: [bare.pid], stop: bare.stop }
}

/** `count` service processes on one port, each with its own DATA_DIR, started one after the other. */
async function startPhog(name: string, count: number, env: Record<string, string>, storedEvents?: () => Promise<number>): Promise<Target> {
  const port = await freePort()
  const procs: ServiceProcess[] = []
  const dirs: string[] = []
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    await Promise.all(procs.map((p) => p.stop()))
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
  try {
    for (let i = 0; i < count; i++) {
      dirs.push(tempDir('phog-bench-multicore-'))
      const p = await spawnService({ ...env, DATA_DIR: dirs[i]!, REUSE_PORT: count > 1 ? 'true' : 'false' }, { port })
      procs.push(p)
      let gone = false
      void p.exited.then(() => (gone = true))
      // the health check on a shared port may have been answered by an earlier process: wait for this one's word
      for (const deadline = Date.now() + 60_000; !p.logs().includes('"msg":"listening"'); await Bun.sleep(100)) {
        if (gone || Date.now() > deadline) throw new Error(`process ${i + 1} of ${count} did not listen:\n${p.logs().slice(-3000)}`)
      }
      // process_start_time_seconds (whole seconds) is what tells the processes' /metrics apart
      if (count > 1) await Bun.sleep(1100)
    }
  } catch (error) {
    await stop()
    throw error
  }
  // one process on the embedded stores: its own /metrics counts what its flush stored
  const flushed = async () => sample(await (await fetch(`${url}/metrics`)).text(), 'pipeline_flushed_events_total')
  return { name, processes: count, url, pids: procs.map((p) => p.pid), storedEvents: storedEvents ?? flushed, stop }
}

/** Each process's /metrics: fresh connections land on either process (the kernel picks by the connection's ports). */
async function scrapeEach(target: Target): Promise<(string | undefined)[]> {
  const byStart = new Map<number, string>()
  for (let i = 0; i < 40 * target.processes && byStart.size < target.processes; i++) {
    const text = await (await fetch(`${target.url}/metrics`, { keepalive: false })).text()
    byStart.set(sample(text, 'process_start_time_seconds'), text)
  }
  // started one after the other, so the earliest start is the first pid
  const texts = [...byStart.entries()].sort((a, b) => a[0] - b[0]).map(([, text]) => text)
  return texts.length === target.processes ? texts : target.pids.map(() => undefined)
}

/** The sum of a metric's samples (every label set). */
function sample(text: string | undefined, name: string): number {
  let sum = 0
  for (const m of (text ?? '').matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm'))) sum += Number(m[1])
  return sum
}

/** A process's threads, grouped by what they are (their names, as Bun and JavaScriptCore set them). */
const THREAD_GROUPS = ['serving thread', 'JS worker threads', "Bun's thread pool", 'JIT compiler', 'garbage collector', 'allocator', 'other'] as const
type ThreadGroup = (typeof THREAD_GROUPS)[number]

function groupOf(pid: number, tid: number, name: string): ThreadGroup {
  if (tid === pid) return 'serving thread'
  // a native thread a worker starts without naming it (DuckDB's pool) inherits the worker's name
  if (/^Worker/.test(name)) return 'JS worker threads'
  if (/^Bun Pool/.test(name)) return "Bun's thread pool"
  if (/JIT/.test(name)) return 'JIT compiler'
  // a thread's name is cut to 15 bytes, JavaScriptCore keeping its end: its collector's threads read 'ollector Thread'
  if (/Heap|ollector|Helper/.test(name)) return 'garbage collector'
  if (/scavenger/.test(name)) return 'allocator'
  return 'other'
}

/** CPU seconds from a /proc stat line (utime + stime), and the name in it. */
function statTimes(stat: string): { name: string; seconds: number } {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND }
}

/** A process's CPU seconds, every thread's, those that ended included. */
function processCpu(pid: number): number {
  try {
    return statTimes(readFileSync(`/proc/${pid}/stat`, 'utf8')).seconds
  } catch {
    return 0
  }
}

/** Each live thread's CPU seconds and group, by thread id. */
function threadCpu(pid: number): Map<string, { group: ThreadGroup; seconds: number }> {
  const threads = new Map<string, { group: ThreadGroup; seconds: number }>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const { name, seconds } = statTimes(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'))
      threads.set(tid, { group: groupOf(pid, Number(tid), name), seconds })
    } catch {
      // the thread ended while it was read
    }
  }
  return threads
}

/** What the threads alive at the end used since `before`, by group (a thread that ended meanwhile is not counted). */
function threadDelta(pid: number, before: Map<string, { seconds: number }>): Record<ThreadGroup, number> {
  const cpu = Object.fromEntries(THREAD_GROUPS.map((g) => [g, 0])) as Record<ThreadGroup, number>
  for (const [tid, t] of threadCpu(pid)) cpu[t.group] += t.seconds - (before.get(tid)?.seconds ?? 0)
  return cpu
}

/** The machine's busy and total CPU ticks (every core). */
function machineTicks(): { busy: number; total: number } {
  const n = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0)
  return { busy: total - n[3]! - n[4]!, total }
}

interface Tally {
  requests: number
  seconds: number
  p99s: number[]
  failures: number
  /** CPU seconds of each process, and of the target's threads by group */
  cpu: number[]
  threads: Record<ThreadGroup, number>
  machineBusy: number[]
  peakRss: number[]
  stored: number
  drains: number[]
}

const newTally = (processes: number): Tally => ({
  requests: 0, seconds: 0, p99s: [], failures: 0, cpu: Array(processes).fill(0),
  threads: Object.fromEntries(THREAD_GROUPS.map((g) => [g, 0])) as Record<ThreadGroup, number>,
  machineBusy: [], peakRss: Array(processes).fill(0), stored: 0, drains: [],
})

/** One wrk run against a target; for the service's ingest, the events stored meanwhile, then the drain. */
async function turn(target: Target, workload: Workload, seconds: number, tally?: Tally): Promise<void> {
  const url = `${target.url}${target.storedEvents ? workload.path : '/'}`
  const counting = workload.ingest ? target.storedEvents : undefined
  const threadsBefore = target.pids.map(threadCpu)
  const cpuBefore = target.pids.map(processCpu)
  const machineBefore = machineTicks()
  const peak = target.pids.map(() => 0)
  const stopSampling = sampler(200, () => target.pids.forEach((pid, i) => (peak[i] = Math.max(peak[i]!, rssMb(pid)))))
  const storedBefore = counting ? await counting() : 0
  const result = await wrk(url, workload.bodies, { seconds, connections: CONNECTIONS })
  const storedUnderLoad = counting ? (await counting()) - storedBefore : 0
  await stopSampling()
  const machineAfter = machineTicks()
  const threads = target.pids.map((pid, i) => threadDelta(pid, threadsBefore[i]!))
  const cpu = target.pids.map((pid, i) => processCpu(pid) - cpuBefore[i]!)
  // every acknowledged event is stored before the next turn: a backlog must not load another target's turn
  const drainStart = Date.now()
  if (counting) {
    const acked = (result.requests - result.non2xx) * 100
    while ((await counting()) - storedBefore < acked) {
      if (Date.now() - drainStart > 120_000) throw new Error(`${target.name}: ${acked} events acknowledged, not all stored within 120 s`)
      await Bun.sleep(100)
    }
  }
  if (!tally) return
  tally.requests += result.requests
  tally.seconds += result.seconds
  tally.p99s.push(result.p99)
  tally.failures += result.non2xx + result.errors
  cpu.forEach((seconds, i) => (tally.cpu[i]! += seconds))
  for (const t of threads) for (const g of THREAD_GROUPS) tally.threads[g] += t[g]
  tally.machineBusy.push((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total))
  peak.forEach((mb, i) => (tally.peakRss[i] = Math.max(tally.peakRss[i]!, mb)))
  tally.stored += storedUnderLoad
  if (counting) tally.drains.push((Date.now() - drainStart) / 1000)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
const rps = (t: Tally) => t.requests / t.seconds
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(bytes < 10 * 2 ** 20 ? 2 : 0)

/** The processes on the shared port answer as the one process does (fresh connections reach each of them). */
async function checkSameAnswers(one: Target, many: Target): Promise<void> {
  const ask = async (target: Target, body: string) => {
    const r = await fetch(`${target.url}/decide/?v=3`, { method: 'POST', body, keepalive: false })
    if (r.status !== 200) throw new Error(`${target.name}: /decide answered ${r.status}`)
    return JSON.stringify(((await r.json()) as { featureFlags?: unknown }).featureFlags)
  }
  for (const body of [...decideBodies(4), ...returningBodies().slice(0, 4)]) {
    const expected = await ask(one, body)
    for (let i = 0; i < 4 * many.processes; i++) {
      // the other processes hear of the flags by NOTIFY and read the persons from Postgres: give them a few seconds
      let got = await ask(many, body)
      for (let tries = 0; got !== expected && tries < 50; tries++) got = (await Bun.sleep(100), await ask(many, body))
      if (got !== expected) throw new Error(`${many.name} answers ${got.slice(0, 200)}, ${one.name} ${expected.slice(0, 200)}`)
    }
  }
}

export async function multicoreBench(seconds: number): Promise<string> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
  const processes = Math.max(2, Number(process.env.BENCH_PROCESSES ?? 2))
  const scratch = tempDir('phog-bench-multicore-bare-')
  const started: Target[] = []
  const [ch, pg] = await Promise.all([startClickHouse(), startPostgres()])
  try {
    const keys = { INIT_PROJECT_API_KEY: KEY, INIT_PERSONAL_API_KEY: PERSONAL, RATE_LIMIT_API_PER_MINUTE: '0', ...ONE_PROJECT, SHUTDOWN_TIMEOUT_MS: '5000' }
    const env = { ...keys, DATABASE_URL: await pg.createDatabase(), CLICKHOUSE_URL: `${ch.url}/bench` }
    const inClickHouse = async () => Number((await ch.query('SELECT count() FROM bench.events')).trim())
    // one after the other: the first migrates the database and applies the INIT_* keys
    const one = await startPhog('phog, 1 process', 1, env, inClickHouse)
    started.push(one)
    const many = await startPhog(`phog, ${processes} processes (REUSE_PORT=true)`, processes, env, inClickHouse)
    started.push(many)
    const embedded = await startPhog('phog, 1 process, embedded stores (PGlite + DuckDB)', 1, keys)
    started.push(embedded)
    await setUp(one.url, benchFlags())
    await checkSameAnswers(one, many)
    await setUp(embedded.url, benchFlags())
    const bare = async (mode: 'echo' | 'parse') => {
      const pair = { one: await startBare(mode), many: await startBareShared(mode, processes, scratch) }
      started.push(pair.one, pair.many)
      return pair
    }
    const [echo, parse] = [await bare('echo'), await bare('parse')]
    const workloads: Workload[] = [
      { name: `/decide?v=3, 50 flags, person_properties in the body`, path: '/decide/?v=3', bodies: decideBodies(VARIANTS), ingest: false, bare: echo },
      { name: '/decide?v=3, 50 flags, returning users (2,000 stored persons)', path: '/decide/?v=3', bodies: returningBodies(), ingest: false, bare: echo },
      // the decide project's key: one project, one database for every workload
      { name: '/batch/, 100 events a request, flush running', path: '/batch/', bodies: [batchBody().replace(INGEST_KEY, KEY)], ingest: true, bare: parse },
    ]
    const services = [one, many, embedded]
    await Bun.sleep(2000)
    const idleRss = new Map(services.map((t) => [t, t.pids.map(rssMb)]))
    const targetsOf = (w: Workload) => [one, many, embedded, w.bare.one, w.bare.many]
    const tallies = new Map<string, Tally>()
    const tallyOf = (w: Workload, t: Target) => tallies.get(`${w.name}|${t.name}`) ?? tallies.set(`${w.name}|${t.name}`, newTally(t.processes)).get(`${w.name}|${t.name}`)!
    // a short warm-up of each, so that none pays for its JIT in the measured rounds
    for (const w of workloads) for (const t of targetsOf(w)) await turn(t, w, Math.min(2, seconds))
    for (let round = 0; round < rounds; round++) {
      for (const w of workloads) {
        const targets = targetsOf(w)
        for (let i = 0; i < targets.length; i++) await turn(targets[(i + round) % targets.length]!, w, seconds, tallyOf(w, targets[(i + round) % targets.length]!))
      }
    }
    const scraped = new Map(await Promise.all(services.map(async (t) => [t, await scrapeEach(t)] as const)))
    const cores = cpus().length
    const rows = workloads.flatMap((w) =>
      targetsOf(w).map((t) => {
        const tally = tallyOf(w, t)
        const single = t.processes === 1
        const against = tallyOf(w, t.storedEvents ? one : w.bare.one)
        const bareOfSameCount = tallyOf(w, single ? w.bare.one : w.bare.many)
        return {
          workload: w.name,
          target: t.name,
          'req/s': Math.round(rps(tally)),
          'p99 ms (median)': median(tally.p99s),
          '×1 process req/s': single ? '' : `${(rps(tally) / rps(against)).toFixed(2)}x`,
          '×1 process p99': single ? '' : `${(median(tally.p99s) / median(against.p99s)).toFixed(2)}x`,
          '×bare (same count)': t.storedEvents ? `${(rps(tally) / rps(bareOfSameCount)).toFixed(2)}x` : '',
          'CPU s/s per process': tally.cpu.map((s) => (s / tally.seconds).toFixed(2)).join(' + '),
          [`machine busy (${cores} cores)`]: `${Math.round(mean(tally.machineBusy) * 100)}%`,
          // wrk, Postgres, ClickHouse and whatever else runs on the machine
          'rest CPU s/s': (mean(tally.machineBusy) * cores - tally.cpu.reduce((a, b) => a + b, 0) / tally.seconds).toFixed(2),
          'stored ev/s under load': t.storedEvents && w.ingest ? Math.round(tally.stored / tally.seconds) : '',
          'drain s (median)': t.storedEvents && w.ingest ? median(tally.drains) : '',
          'non-2xx': tally.failures,
        }
      }),
    )
    const threadRows = workloads.flatMap((w) =>
      services.map((t) => {
        const tally = tallyOf(w, t)
        return { workload: w.name, target: t.name, ...Object.fromEntries(THREAD_GROUPS.map((g) => [g, (tally.threads[g] / tally.seconds).toFixed(2)])) }
      }),
    )
    const memoryRows = services.flatMap((t) =>
      t.pids.map((pid, i) => {
        const text = scraped.get(t)![i]
        const peakOf = (w: Workload) => Math.round(tallyOf(w, t).peakRss[i]!)
        const known = (read: () => string | number) => (text ? read() : '?')
        return {
          target: t.name,
          process: `${i + 1} (pid ${pid})`,
          'RSS idle MB': Math.round(idleRss.get(t)![i]!),
          'peak decide MB': Math.max(peakOf(workloads[0]!), peakOf(workloads[1]!)),
          'peak ingest MB': peakOf(workloads[2]!),
          'decide answers': known(() => sample(text, 'decide_requests_total')),
          'events received': known(() => sample(text, 'capture_received_events_total')),
          'events flushed': known(() => sample(text, 'pipeline_flushed_events_total')),
          'JS heap MB': known(() => mb(sample(text, 'bun_heap_size_bytes'))),
          'hash memo MB': known(() => mb(sample(text, 'decide_hash_memo_bytes'))),
          'person cache MB (entries)': known(() => `${mb(sample(text, 'decide_person_cache_bytes'))} (${sample(text, 'decide_person_cache_entries')})`),
        }
      }),
    )
    return (
      `### multicore: 1 process against ${processes} on one port (REUSE_PORT=true, a DATA_DIR each), Postgres 15, ClickHouse ${ch.version}; ` +
      `wrk 1 thread × ${CONNECTIONS} connections, ${rounds} rounds × ${seconds}s each, interleaved\n\n${table(rows)}\n\n` +
      `Where each service's CPU went, CPU seconds a second by thread (summed over its processes; threads named by Bun and JavaScriptCore; a thread that ended during a turn is not counted):\n\n${table(threadRows)}\n\n` +
      `Per process (its /metrics after the rounds, warm-ups and set-up included; the kernel splits the work by connection):\n\n${table(memoryRows)}\n`
    )
  } finally {
    for (const t of started.reverse()) await t.stop().catch(() => undefined)
    await Promise.all([ch.destroy(), pg.destroy()])
    rmSync(scratch, { recursive: true, force: true })
  }
}
