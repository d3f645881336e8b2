// npm run bench -- peer
// phog's /decide against its peers on the same 50 flags (bench/decide.ts benchFlags, translated by
// bench/peer/translate.ts) and the same 64 users: GrowthBook's evaluator (@growthbook/proxy-eval on a bare
// node:http server), Unleash's frontend API (unleash-server on Postgres) and @unleash/proxy in front of it, and
// the bare Bun echo as the yardstick. Each is loaded by wrk in turns, the order rotating each round (as
// bench/against.ts does); the server's CPU time (utime + stime from /proc, its child processes included) is read
// around each turn. The peers' packages live in bench/peer/node_modules, installed here on first run (never by CI).
// BENCH_PEER_UNLEASH=0 leaves Unleash out (its start takes a minute: Postgres, migrations, 50 toggles);
// BENCH_PEER_NODE=/path/to/node runs the peers on another Node than the machine's.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { planOf } from './against'
import { VARIANTS, benchFlags, decideBodies } from './decide'
import { ROOT, startBaseline, startService, table, tempDir, wrk, type Proc, type WrkResult } from './lib'
import { freePort } from '../test/helpers/spawn-service'
import { checkAnswers, growthbookFlags, phogFlags, unleashFlags, type Flags } from './peer/answers'
import { FRONTEND_TOKEN, PEER_NODE, PROXY_CLIENT_KEY, startUnleash } from './peer/unleash'
import { dateProperties, growthbookBody, growthbookFeatures, unleashBody, unleashToggles, userOf, type PosthogFlag } from './peer/translate'

const PEER_DIR = join(ROOT, 'bench/peer')
const CONNECTIONS = 32
const GROWTHBOOK_CLIENT_KEY = 'sdk-bench-peer'

/** npm ci into bench/peer when a pinned package is missing or at another version. */
function installPeers(): void {
  const pinned = JSON.parse(readFileSync(join(PEER_DIR, 'package.json'), 'utf8')).dependencies as Record<string, string>
  const installed = (name: string) => {
    const file = join(PEER_DIR, 'node_modules', name, 'package.json')
    return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : undefined
  }
  if (Object.entries(pinned).every(([name, version]) => installed(name) === version)) return
  process.stderr.write('peer: installing the peers into bench/peer/node_modules (npm ci)\n')
  const run = Bun.spawnSync(['npm', 'ci', '--prefix', PEER_DIR, '--no-audit', '--no-fund'], { stdout: 'ignore', stderr: 'inherit' })
  if (run.exitCode !== 0) throw new Error('npm ci --prefix bench/peer failed')
}

const versionOf = (name: string) => JSON.parse(readFileSync(join(PEER_DIR, 'node_modules', name, 'package.json'), 'utf8')).version as string

// ---- CPU time from /proc ----

const TICKS_PER_SECOND = Number(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout.toString().trim()) || 100

/** utime + stime in seconds of the given processes and all their descendants (threads are in their process's). */
function cpuSeconds(roots: number[]): number {
  const stats = new Map<number, { ppid: number; ticks: number }>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')
      stats.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) })
    } catch {
      // gone meanwhile
    }
  }
  const counted = new Set(roots.filter((p) => stats.has(p)))
  for (let grew = true; grew; ) {
    grew = false
    for (const [pid, s] of stats) if (!counted.has(pid) && counted.has(s.ppid)) (counted.add(pid), (grew = true))
  }
  let ticks = 0
  for (const pid of counted) ticks += stats.get(pid)!.ticks
  return ticks / TICKS_PER_SECOND
}

// ---- the sides ----

interface Target {
  name: string
  url: string
  bodies: string[]
  headers?: Record<string, string>
  /** the processes whose CPU time is the server's */
  pids: () => number[]
  counted: string
  answer: (body: string) => Promise<Flags>
  /** bytes of the answers to the check's requests, and how many */
  answered: { bytes: number; count: number }
  tally: { requests: number; seconds: number; cpu: number; p99s: number[]; failures: number }
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ json: unknown; bytes: number }> {
  const r = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })
  const text = await r.text()
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${text.slice(0, 300)}`)
  return { json: JSON.parse(text), bytes: text.length }
}

function target(name: string, url: string, bodies: string[], pids: () => number[], counted: string, read: (json: unknown) => Flags, headers?: Record<string, string>): Target {
  const t: Target = {
    name,
    url,
    bodies,
    headers,
    pids,
    counted,
    tally: { requests: 0, seconds: 0, cpu: 0, p99s: [], failures: 0 },
    answered: { bytes: 0, count: 0 },
    answer: async (body) => {
      const { json, bytes } = await post(url, body, headers)
      t.answered.bytes += bytes
      t.answered.count++
      return read(json)
    },
  }
  return t
}

async function startGrowthbook(flags: PosthogFlag[], dir: string): Promise<Proc> {
  const payloadFile = join(dir, 'growthbook-payload.json')
  writeFileSync(payloadFile, JSON.stringify({ features: growthbookFeatures(flags) }))
  const port = await freePort()
  const proc = Bun.spawn([PEER_NODE, join(PEER_DIR, 'growthbook-server.mjs'), String(port), GROWTHBOOK_CLIENT_KEY, payloadFile], {
    cwd: PEER_DIR,
    env: { ...process.env, NODE_ENV: 'production' },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (await fetch(`${url}/healthcheck`).then((r) => r.ok, () => false)) break
    if (i > 300) throw new Error('the GrowthBook server did not come up')
    await Bun.sleep(100)
  }
  return { pid: proc.pid, url, stop: async () => void (proc.kill('SIGTERM'), await proc.exited) }
}

// ---- the run ----

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function measure(t: Target, seconds: number): Promise<WrkResult> {
  const pids = t.pids()
  const before = cpuSeconds(pids)
  const r = await wrk(t.url, t.bodies, { seconds, connections: CONNECTIONS, headers: t.headers })
  t.tally.cpu += cpuSeconds(pids) - before
  return r
}

function rows(targets: Target[]): Record<string, string | number>[] {
  const rps = (t: Target) => t.tally.requests / t.tally.seconds
  const perCpuSecond = (t: Target) => t.tally.requests / t.tally.cpu
  const [phog, bare] = [targets[0]!, targets[targets.length - 1]!]
  return targets.map((t) => ({
    target: t.name,
    'req/s': Math.round(rps(t)),
    'p99 ms': median(t.tally.p99s),
    'vs bare': `${(rps(t) / rps(bare)).toFixed(3)}x`,
    'phog ÷ this, req/s': `${(rps(phog) / rps(t)).toFixed(2)}x`,
    'server CPU-s per 1,000 req': ((t.tally.cpu / t.tally.requests) * 1000).toFixed(3),
    'phog ÷ this, req per CPU-s': `${(perCpuSecond(phog) / perCpuSecond(t)).toFixed(2)}x`,
    'answer bytes (mean)': Math.round(t.answered.bytes / t.answered.count),
    'non-2xx': t.tally.failures,
  }))
}

export async function peerBench(seconds: number, rounds: number): Promise<string> {
  installPeers()
  const flags = benchFlags() as unknown as PosthogFlag[]
  const keys = flags.map((f) => f.key)
  const phogBodies = decideBodies(VARIANTS)
  const users = phogBodies.map(userOf)
  const dir = tempDir('phog-peer-')
  const stops: (() => Promise<void>)[] = []
  const notes: string[] = []
  try {
    const bare = await startBaseline('echo')
    stops.push(() => bare.stop())
    const plan = planOf('decide')
    mkdirSync(join(dir, 'phog'))
    const phog = await startService({ DATA_DIR: join(dir, 'phog'), ...plan.env })
    stops.push(() => phog.stop())
    await plan.setUp!(phog.url)
    const growthbook = await startGrowthbook(flags, dir)
    stops.push(() => growthbook.stop())

    const targets: Target[] = [
      target('phog /decide?v=3', `${phog.url}${plan.path}`, phogBodies, () => phog.pids, 'the service process', phogFlags),
      target('GrowthBook: @growthbook/proxy-eval on node:http', `${growthbook.url}/api/eval/${GROWTHBOOK_CLIENT_KEY}`, users.map(growthbookBody), () => [growthbook.pid], 'the node process', (j) => growthbookFlags(j, keys)),
    ]
    if (process.env.BENCH_PEER_UNLEASH !== '0') {
      try {
        const unleash = await startUnleash(unleashToggles(flags))
        stops.push(() => unleash.stop())
        const bodies = users.map((u) => unleashBody(u, dateProperties(flags)))
        const postgres = () => [unleash.postmasterPid()].filter((p): p is number => p !== undefined)
        targets.push(
          target('Unleash frontend API (unleash-server)', unleash.frontendUrl, bodies, () => [unleash.serverPid, ...postgres()], 'unleash-server + Postgres', (j) => unleashFlags(j, keys), { authorization: FRONTEND_TOKEN }),
          target('Unleash: @unleash/proxy in front of it', unleash.proxyUrl, bodies, () => [unleash.proxyPid, unleash.serverPid, ...postgres()], 'the proxy + unleash-server + Postgres', (j) => unleashFlags(j, keys), { authorization: PROXY_CLIENT_KEY }),
        )
      } catch (error) {
        notes.push(`Unleash left out: it did not start (${String(error).split('\n')[0]})`)
      }
    }
    const bareTarget = target('bare Bun.serve (JSON.parse + echo)', `${bare.url}/`, phogBodies, () => [bare.pid], 'the Bun process', () => ({}))
    targets.push(bareTarget)

    // every peer answers the bench's users as phog does before it is loaded
    const phogAnswers = await Promise.all(phogBodies.map((b) => targets[0]!.answer(b)))
    for (const t of targets.slice(1, -1)) checkAnswers(t.name, flags, phogAnswers, await Promise.all(t.bodies.map((b) => t.answer(b))))
    await bareTarget.answer(phogBodies[0]!)

    // a short warm-up of each, so that none pays for its JIT in the measured rounds
    for (const t of targets) await wrk(t.url, t.bodies, { seconds: 2, connections: CONNECTIONS, headers: t.headers })
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + round) % targets.length]!
        const r = await measure(t, seconds)
        t.tally.requests += r.requests
        t.tally.seconds += r.seconds
        t.tally.p99s.push(r.p99)
        t.tally.failures += r.non2xx + r.errors
      }
    }
    const failing = targets.filter((t) => t.tally.failures > t.tally.requests / 100).map((t) => t.name)
    if (failing.length > 0) notes.push(`more than 1 % non-2xx answers from ${failing.join(', ')}: their rates are not comparable`)
    const perCpu = (t: Target) => t.tally.requests / t.tally.cpu
    const growthbookRatio = perCpu(targets[0]!) / perCpu(targets[1]!)
    notes.push(`phog's requests per server CPU-second ÷ GrowthBook's: **${growthbookRatio.toFixed(2)}x** (the goal: ≥ 2x)`)
    notes.push(`server CPU counted: ${targets.map((t) => `${t.name}: ${t.counted}`).join('; ')} (each with its child processes)`)
    const versions =
      `@growthbook/proxy-eval ${versionOf('@growthbook/proxy-eval')} (@growthbook/growthbook ${versionOf('@growthbook/growthbook')}), ` +
      `unleash-server ${versionOf('unleash-server')}, @unleash/proxy ${versionOf('@unleash/proxy')}, node ${Bun.spawnSync([PEER_NODE, '--version']).stdout.toString().trim()}`
    return (
      `### peer: /decide against GrowthBook and Unleash, ${flags.length} flags, ${VARIANTS} users; wrk 1 thread × ${CONNECTIONS} connections, ${rounds} rounds × ${seconds}s each, interleaved\n\n` +
      `${versions}\n\n${table(rows(targets))}\n\n${notes.map((n) => `- ${n}`).join('\n')}\n`
    )
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
}
