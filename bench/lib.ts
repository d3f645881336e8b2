// Shared benchmark machinery: processes, wrk runs, RSS sampling, tables.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../test/helpers/spawn-service'

export const ROOT = fileURLToPath(new URL('../', import.meta.url))

export interface WrkResult {
  requests: number
  seconds: number
  rps: number
  errors: number
  non2xx: number
  p50: number
  p99: number
  max: number
}

export interface Proc {
  pid: number
  url: string
  stop(): Promise<void>
}

export async function waitHealthy(url: string, path = '/_health', ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${url}${path}`, { method: path === '/' ? 'POST' : 'GET', body: path === '/' ? '{}' : undefined })
      if (r.status < 500) return
    } catch {
      // not up yet
    }
    await Bun.sleep(100)
  }
  throw new Error(`${url} did not come up`)
}

export async function startBaseline(mode: 'parse' | 'echo'): Promise<Proc> {
  const port = await freePort()
  const proc = Bun.spawn([process.execPath, 'run', join(ROOT, 'bench/baseline-server.ts'), mode, String(port)], { stdout: 'ignore', stderr: 'inherit' })
  const url = `http://127.0.0.1:${port}`
  await waitHealthy(url, '/')
  return { pid: proc.pid, url, stop: async () => void (proc.kill('SIGKILL'), await proc.exited) }
}

/** BENCH_SERVICE_ENV="A=1 B=2" adds settings to the service under test (for experiments). */
function serviceEnvOverrides(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const pair of (process.env.BENCH_SERVICE_ENV ?? '').split(' ').filter(Boolean)) {
    const [k, ...v] = pair.split('=')
    out[k] = v.join('=')
  }
  return out
}

/** The service as `npm start` runs it; `root` is another checkout's directory (bench/against.ts). */
export async function startService(env: Record<string, string>, processes = 1, root = ROOT): Promise<Proc & { pids: number[] }> {
  const port = await freePort()
  // a DATA_DIR is one live process's (its log, its lock): several processes get a directory each below it (on the
  // embedded stores that makes separate installations: fine for capture's throughput, not for shared data)
  const dataDirOf = (i: number) => (processes > 1 && env.DATA_DIR ? { DATA_DIR: join(env.DATA_DIR, `process-${i}`) } : {})
  const procs = Array.from({ length: processes }, (_, i) =>
    Bun.spawn([process.execPath, ...(process.env.BENCH_BUN_FLAGS ?? '').split(' ').filter(Boolean), 'run', join(root, 'src/main.ts')], {
      cwd: root,
      // as `npm start` runs it (the JSC heap hint included)
      env: { ...process.env, LOG_LEVEL: 'warn', BUN_JSC_forceRAMSize: '268435456', BUN_JSC_largeHeapSize: '20971520', ...serviceEnvOverrides(), ...env, ...dataDirOf(i), PORT: String(port), HOST: '127.0.0.1', REUSE_PORT: processes > 1 ? 'true' : 'false' },
      stdout: 'ignore',
      stderr: 'inherit',
    }),
  )
  const url = `http://127.0.0.1:${port}`
  await waitHealthy(url)
  return {
    pid: procs[0].pid,
    pids: procs.map((p) => p.pid),
    url,
    async stop() {
      for (const p of procs) p.kill('SIGTERM')
      await Promise.all(procs.map((p) => p.exited))
    },
  }
}

/** Resident memory of a process (and the peak over the samples taken). */
export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
    return kb / 1024
  } catch {
    return 0
  }
}

export function sampler(every: number, fn: () => Promise<void> | void) {
  let running = true
  const loop = (async () => {
    while (running) {
      await fn()
      await Bun.sleep(every)
    }
  })()
  return async () => {
    running = false
    await loop
  }
}

const LUA = `
wrk.method = "POST"
wrk.headers["Content-Type"] = os.getenv("WRK_CONTENT_TYPE") or "application/json"
local f = io.open(os.getenv("WRK_BODY_FILE"), "rb")
wrk.body = f:read("*a")
f:close()
for line in (os.getenv("WRK_HEADERS") or ""):gmatch("[^\\n]+") do
  local name, value = line:match("^([^:]+):%s*(.*)$")
  wrk.headers[name] = value
end
local paths = {}
local n = tonumber(os.getenv("WRK_BODY_VARIANTS") or "0")
for i = 1, n do
  local g = io.open(os.getenv("WRK_BODY_FILE") .. "." .. i, "rb")
  paths[i] = g:read("*a")
  g:close()
end
local counter = 0
request = function()
  if n > 0 then
    counter = counter + 1
    return wrk.format(nil, nil, nil, paths[(counter % n) + 1])
  end
  return wrk.format()
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`

/** Run wrk against url with the body (or a rotating set of bodies); latencies in ms. */
export async function wrk(url: string, bodies: string[], options: { seconds: number; connections: number; threads?: number; contentType?: string; headers?: Record<string, string> }): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'phog-bench-'))
  const script = join(dir, 'post.lua')
  writeFileSync(script, LUA)
  const bodyFile = join(dir, 'body')
  writeFileSync(bodyFile, bodies[0])
  if (bodies.length > 1) bodies.forEach((b, i) => writeFileSync(`${bodyFile}.${i + 1}`, b))
  const proc = Bun.spawn(
    ['wrk', '-t', String(options.threads ?? 1), '-c', String(options.connections), '-d', `${options.seconds}s`, '--timeout', '10s', '-s', script, url],
    {
      env: { ...process.env, WRK_BODY_FILE: bodyFile, WRK_BODY_VARIANTS: String(bodies.length > 1 ? bodies.length : 0), WRK_CONTENT_TYPE: options.contentType ?? 'application/json', WRK_HEADERS: Object.entries(options.headers ?? {}).map(([k, v]) => `${k}: ${v}`).join('\n') },
      stdout: 'pipe',
      stderr: 'pipe',
    },
  )
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  await proc.exited
  const m = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(out)
  if (!m) throw new Error(`wrk failed: ${out}\n${err}`)
  const [requests, durationUs, errors, non2xx, p50, p99, max] = m.slice(1).map(Number)
  const seconds = durationUs / 1e6
  return { requests, seconds, rps: requests / seconds, errors, non2xx, p50: p50 / 1000, p99: p99 / 1000, max: max / 1000 }
}

export function table(rows: Record<string, string | number>[]): string {
  const keys = Object.keys(rows[0])
  const cell = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v)
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => cell(r[k]).length)))
  const line = (vals: string[]) => `| ${vals.map((v, i) => v.padEnd(widths[i])).join(' | ')} |`
  return [line(keys), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map((r) => line(keys.map((k) => cell(r[k]))))].join('\n')
}

export async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)
  return m ? Number(m[1]) : 0
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix))
}
