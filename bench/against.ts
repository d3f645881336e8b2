// npm run bench -- decide|decide-stored|decide-500|ingest --against <git rev>
// The regression guard: the working tree's service and the given revision's, built from a temporary worktree, set
// up with the same flags and data, then loaded by wrk in turns (new, old, bare; the order rotating each round) so
// that the machine's drift falls on both alike. Prints each one's req/s and p99 and the ratio new/old.
import { existsSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { KEY as DECIDE_KEY, PERSONAL, VARIANTS, benchFlags, decideBodies, manyFlags, returningBodies, setUp } from './decide'
import { KEY as INGEST_KEY, ONE_PROJECT, batchBody } from './ingest'
import { ROOT, startBaseline, startService, table, tempDir, wrk, type Proc, type WrkResult } from './lib'

export const AGAINST_KINDS = ['decide', 'decide-stored', 'decide-500', 'ingest'] as const
export type AgainstKind = (typeof AGAINST_KINDS)[number]

interface Plan {
  path: string
  baseline: 'echo' | 'parse'
  bodies: () => string[]
  env: Record<string, string>
  setUp?: (url: string) => Promise<void>
  describe: string
}

/**
 * The capture path alone keeps everything in its log for the whole run (rounds of both targets): 2 GiB, the default
 * cap, filled within the run and answered 503 from then on, so the log may grow to 16 GiB here (disk, not memory).
 */
const UNFLUSHED_RUN = { WAL_MAX_BYTES: String(16 * 1024 ** 3) }

export function planOf(kind: AgainstKind): Plan {
  const decideEnv = { INIT_PROJECT_API_KEY: DECIDE_KEY, INIT_PERSONAL_API_KEY: PERSONAL, RATE_LIMIT_API_PER_MINUTE: '0' }
  switch (kind) {
    case 'decide':
      return { path: '/decide/?v=3', baseline: 'echo', bodies: () => decideBodies(VARIANTS), env: decideEnv, setUp: (url) => setUp(url, benchFlags()), describe: '/decide?v=3, 50 flags, person_properties in the body' }
    case 'decide-stored':
      return { path: '/decide/?v=3', baseline: 'echo', bodies: returningBodies, env: decideEnv, setUp: (url) => setUp(url, benchFlags()), describe: '/decide?v=3, 50 flags, returning users (2,000 stored persons, distinct_id only)' }
    case 'decide-500':
      return { path: '/decide/?v=3', baseline: 'echo', bodies: () => decideBodies(VARIANTS), env: decideEnv, setUp: (url) => setUp(url, manyFlags()), describe: '/decide?v=3, 500 flags, person_properties in the body' }
    case 'ingest':
      // the capture path alone: the flush is put off past the run, as in the ingest bench's second row
      return { path: '/batch/', baseline: 'parse', bodies: () => [batchBody()], env: { INIT_PROJECT_API_KEY: INGEST_KEY, ...ONE_PROJECT, ...UNFLUSHED_RUN, FLUSH_INTERVAL_MS: '3600000', FLUSH_MAX_EVENTS: '1000000000', SHUTDOWN_TIMEOUT_MS: '1000' }, describe: '/batch/, 100 events a request, capture path alone' }
  }
}

function git(args: string[], cwd = ROOT): string {
  const run = Bun.spawnSync(['git', ...args], { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (run.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr.toString()}`)
  return run.stdout.toString().trim()
}

/** A detached worktree of `rev` with dependencies: the working tree's when the lock files agree, else its own. */
function checkout(rev: string): { dir: string; sha: string; remove(): void } {
  const sha = git(['rev-parse', '--short', `${rev}^{commit}`])
  const dir = join(tempDir('phog-against-'), sha)
  git(['worktree', 'add', '--detach', dir, sha])
  const lock = (root: string) => (existsSync(join(root, 'package-lock.json')) ? readFileSync(join(root, 'package-lock.json'), 'utf8') : '')
  if (lock(dir) === lock(ROOT)) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  else {
    process.stderr.write(`against: ${sha} has other dependencies, installing them (npm ci)\n`)
    const install = Bun.spawnSync(['npm', 'ci', '--no-audit', '--no-fund'], { cwd: dir, stdout: 'ignore', stderr: 'inherit' })
    if (install.exitCode !== 0) throw new Error(`npm ci in ${dir} failed`)
  }
  return {
    dir,
    sha,
    remove() {
      git(['worktree', 'remove', '--force', dir])
      rmSync(join(dir, '..'), { recursive: true, force: true })
    },
  }
}

interface Tally {
  requests: number
  seconds: number
  p99s: number[]
  failures: number
}

const tally = (): Tally => ({ requests: 0, seconds: 0, p99s: [], failures: 0 })
function add(t: Tally, r: WrkResult): void {
  t.requests += r.requests
  t.seconds += r.seconds
  t.p99s.push(r.p99)
  t.failures += r.non2xx + r.errors
}
const rps = (t: Tally) => t.requests / t.seconds
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function startTarget(plan: Plan, root: string): Promise<Proc & { dataDir: string }> {
  const dataDir = tempDir('phog-against-data-')
  const service = await startService({ DATA_DIR: dataDir, ...plan.env }, 1, root)
  await plan.setUp?.(service.url)
  return { ...service, dataDir }
}

export async function againstBench(kind: AgainstKind, rev: string, seconds: number, rounds: number): Promise<string> {
  const plan = planOf(kind)
  const old = checkout(rev)
  const current = git(['rev-parse', '--short', 'HEAD'])
  const dirty = git(['status', '--porcelain', '--untracked-files=no', '--', 'src']) !== ''
  const started: (Proc & { dataDir?: string })[] = []
  try {
    const bare = await startBaseline(plan.baseline)
    started.push(bare)
    const newer = await startTarget(plan, ROOT)
    started.push(newer)
    const older = await startTarget(plan, old.dir)
    started.push(older)
    const bodies = plan.bodies()
    const targets = [
      { name: 'new', url: `${newer.url}${plan.path}`, tally: tally() },
      { name: 'old', url: `${older.url}${plan.path}`, tally: tally() },
      { name: 'bare', url: `${bare.url}/`, tally: tally() },
    ]
    // a short warm-up of each, so that neither pays for its JIT in the measured rounds
    for (const t of targets) await wrk(t.url, bodies, { seconds: 2, connections: 32 })
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + round) % targets.length]
        add(t.tally, await wrk(t.url, bodies, { seconds, connections: 32 }))
      }
    }
    const [n, o, b] = targets.map((t) => t.tally)
    const row = (label: string, t: Tally) => ({
      target: label,
      'req/s': Math.round(rps(t)),
      'p99 ms (median of rounds)': median(t.p99s),
      'vs bare': `${(rps(t) / rps(b)).toFixed(3)}x`,
      'non-2xx': t.failures,
    })
    const rows = [row(`new: ${current}${dirty ? ' + uncommitted changes' : ''}`, n), row(`old: ${old.sha}`, o), row('bare Bun.serve', b)]
    const ratio = rps(n) / rps(o)
    const p99Ratio = median(n.p99s) / median(o.p99s)
    const failing = [n, o].some((t) => t.failures > t.requests / 100)
    const verdict = (ratio < 0.9 ? ' — a drop of more than 10 %: explain it' : '') + (failing ? ' — more than 1 % non-2xx answers: the rates are not comparable' : '')
    return (
      `### ${kind} against ${old.sha}: POST ${plan.describe}; wrk 1 thread × 32 connections, ${rounds} rounds × ${seconds}s each, interleaved\n\n` +
      `${table(rows)}\n\nnew/old req/s: **${ratio.toFixed(2)}x**, p99 new/old: ${p99Ratio.toFixed(2)}x${verdict}\n`
    )
  } finally {
    for (const p of started.reverse()) {
      await p.stop().catch(() => undefined)
      if (p.dataDir) rmSync(p.dataDir, { recursive: true, force: true })
    }
    old.remove()
  }
}
