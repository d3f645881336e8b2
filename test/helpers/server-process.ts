// Shared plumbing for the throwaway database servers used by tests
// (postgres-server.ts, clickhouse-server.ts): free ports, binary lookup/installation,
// child processes with log files, and the cleanup that keeps servers from outliving
// the test process.
//
// Cleanup happens on three layers, because `bun test` does not run `process.on('exit')`
// listeners (Bun 1.4 only dispatches them when node:test APIs are used):
//   1. destroy() on each server (explicit, awaited);
//   2. synchronous kill on 'exit' / SIGINT / SIGTERM / SIGHUP (for `bun run` and Ctrl-C);
//   3. a detached watchdog shell per server that holds the read end of a pipe from this
//      process: when this process ends for ANY reason (normal end of `bun test`, crash,
//      SIGKILL) the kernel closes the pipe, the watchdog sees EOF, kills the server whose
//      pid is in `<dir>/server.pid` and removes the temp dir.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'

export const STARTUP_TIMEOUT_MS = 60_000

// ---------------------------------------------------------------------------------------
// Process-wide state lives on globalThis so that it is shared even if this module is
// evaluated more than once in one process.
interface GlobalState {
  reservedPorts: Set<number>
  live: Set<TrackedServer>
  handlersInstalled: boolean
  aptQueue: Promise<unknown>
}
const STATE_KEY = Symbol.for('phog.test.server-process.state')
const g = globalThis as unknown as Record<symbol, GlobalState | undefined>
const state: GlobalState = (g[STATE_KEY] ??= {
  reservedPorts: new Set<number>(),
  live: new Set<TrackedServer>(),
  handlersInstalled: false,
  aptQueue: Promise.resolve(),
})

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

// ---------------------------------------------------------------------------------------
// Ports

function probePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.once('error', reject)
    srv.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('could not read the bound port'))))
    })
  })
}

/** A port that was free a moment ago and that no other caller in this process holds. */
export async function reservePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await probePort()
    if (!state.reservedPorts.has(port)) {
      state.reservedPorts.add(port)
      return port
    }
  }
  throw new Error('could not find a free TCP port on 127.0.0.1')
}

/** Marks an explicitly requested port as taken (so reservePort() never hands it out). */
export function claimPort(port: number): void {
  state.reservedPorts.add(port)
}

export function releasePort(port: number): void {
  state.reservedPorts.delete(port)
}

// ---------------------------------------------------------------------------------------
// Binaries

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** First executable `name` in `dirs` then on PATH, with symlinks resolved. */
export function findBinary(name: string, dirs: string[] = []): string | undefined {
  const pathDirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)
  for (const dir of [...dirs, ...pathDirs]) {
    const candidate = path.join(dir, name)
    if (isExecutable(candidate)) return fs.realpathSync(candidate)
  }
  return undefined
}

function aptAvailable(): boolean {
  return isRoot() && isExecutable('/usr/bin/apt-get')
}

function runApt(args: string[]): { ok: boolean; output: string } {
  const res = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 15 * 60_000,
  })
  return { ok: res.status === 0, output: `${res.stdout ?? ''}${res.stderr ?? ''}${res.error ? String(res.error) : ''}` }
}

/**
 * Resolves a binary with `find()`; when it is missing and we are root on a Debian-like
 * system, installs `packages` with apt-get (serialised within the process) and looks again.
 * Otherwise throws an error that says exactly what to install. Never returns undefined.
 */
export async function ensureBinary<T>(what: string, find: () => T | undefined, packages: string[]): Promise<T> {
  const found = find()
  if (found !== undefined) return found
  const installHint = `apt-get install -y ${packages.join(' ')}`
  if (!aptAvailable()) {
    throw new Error(`${what} is not installed. Install it with \`${installHint}\` (as root, DEBIAN_FRONTEND=noninteractive).`)
  }
  const run = state.aptQueue.then(() => {
    if (find() !== undefined) return
    let res = runApt(['install', '-y', '--no-install-recommends', ...packages])
    if (!res.ok) {
      runApt(['update'])
      res = runApt(['install', '-y', '--no-install-recommends', ...packages])
    }
    if (!res.ok) {
      throw new Error(`${what} is not installed and \`${installHint}\` failed:\n${tail(res.output, 30)}`)
    }
  })
  state.aptQueue = run.catch(() => undefined)
  await run
  const after = find()
  if (after === undefined) throw new Error(`${what} is still missing after \`${installHint}\`; install it by hand.`)
  return after
}

// ---------------------------------------------------------------------------------------
// Logs

export function tail(text: string, lines: number): string {
  const all = text.split('\n')
  while (all.length > 0 && all[all.length - 1] === '') all.pop()
  return all.slice(-lines).join('\n')
}

/** The last `lines` lines of a file (reads at most the last 64 KiB); '' when unreadable. */
export function fileTail(file: string, lines = 40): string {
  try {
    const fd = fs.openSync(file, 'r')
    try {
      const size = fs.fstatSync(fd).size
      const len = Math.min(size, 64 * 1024)
      const buf = Buffer.alloc(len)
      fs.readSync(fd, buf, 0, len, size - len)
      return tail(buf.toString('utf8'), lines)
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return ''
  }
}

/** Text appended to `file` since byte `offset`. */
export function readFrom(file: string, offset: number): string {
  try {
    const fd = fs.openSync(file, 'r')
    try {
      const size = fs.fstatSync(fd).size
      if (size <= offset) return ''
      const buf = Buffer.alloc(size - offset)
      fs.readSync(fd, buf, 0, buf.length, offset)
      return buf.toString('utf8')
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return ''
  }
}

export function fileSize(file: string): number {
  try {
    return fs.statSync(file).size
  } catch {
    return 0
  }
}

export function logTails(files: string[], lines = 40): string {
  return files
    .map((f) => {
      const t = fileTail(f, lines)
      return t ? `--- ${f} (last lines) ---\n${t}` : ''
    })
    .filter(Boolean)
    .join('\n')
}

// ---------------------------------------------------------------------------------------
// Processes

export function isAlive(pid: number): boolean {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    if (fs.existsSync('/proc/self/stat')) return false // /proc works, so the process is gone
    try {
      process.kill(pid, 0) // no /proc: ask the kernel (zombies count as alive here)
      return true
    } catch {
      return false
    }
  }
  // "<pid> (<comm>) <state> ...": a zombie (Z) or dead (X) process no longer runs.
  const state = stat.slice(stat.lastIndexOf(')') + 2)[0]
  return state !== 'Z' && state !== 'X'
}

/** Direct children of `pid` (by scanning /proc). */
export function childPids(pid: number): number[] {
  const out: number[] = []
  let entries: string[]
  try {
    entries = fs.readdirSync('/proc')
  } catch {
    return out
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[1]) === pid) out.push(Number(e))
    } catch {
      // raced with the process exiting
    }
  }
  return out
}

export async function waitGone(pids: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs
  let left = pids.filter(isAlive)
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(20)
    left = left.filter(isAlive)
  }
  return left
}

export function signal(pid: number | undefined, sig: NodeJS.Signals): void {
  if (!pid) return
  try {
    process.kill(pid, sig)
  } catch {
    // already gone
  }
}

export interface ExitInfo {
  code: number | null
  signal: NodeJS.Signals | null
}

/** A server child process whose stdout/stderr go to a log file and that never keeps the event loop alive. */
export class ServerProcess {
  readonly child: ChildProcess
  readonly pid: number
  readonly exited: Promise<ExitInfo>
  running = true

  constructor(
    command: string,
    args: string[],
    opts: { cwd: string; logFile: string; env: Record<string, string>; uid?: number; gid?: number; pidFile: string },
  ) {
    const fd = fs.openSync(opts.logFile, 'a')
    try {
      this.child = spawn(command, args, {
        cwd: opts.cwd,
        env: opts.env,
        stdio: ['ignore', fd, fd],
        uid: opts.uid,
        gid: opts.gid,
      })
    } finally {
      fs.closeSync(fd)
    }
    this.exited = new Promise<ExitInfo>((resolve) => {
      let done = false
      const finish = (info: ExitInfo) => {
        if (done) return
        done = true
        this.running = false
        try {
          fs.rmSync(opts.pidFile, { force: true })
        } catch {
          // the directory may already be gone
        }
        resolve(info)
      }
      this.child.once('exit', (code, sig) => finish({ code, signal: sig }))
      this.child.once('error', (err) => {
        try {
          fs.appendFileSync(opts.logFile, `\n[test helper] could not run ${command}: ${String(err)}\n`)
        } catch {
          // ignore
        }
        finish({ code: -1, signal: null })
      })
    })
    this.pid = this.child.pid ?? 0
    if (this.pid > 0) fs.writeFileSync(opts.pidFile, String(this.pid))
    this.child.unref()
  }

  /** Waits for exit; false on timeout. */
  async waitExit(timeoutMs: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs)
    })
    const res = await Promise.race([this.exited.then(() => true as const), timeout])
    if (timer) clearTimeout(timer)
    return res
  }

  /** Sends `sig`, waits up to `timeoutMs`, then SIGKILLs and waits for the exit. */
  async terminate(sig: NodeJS.Signals, timeoutMs: number): Promise<void> {
    if (!this.running) return
    signal(this.pid, sig)
    if (await this.waitExit(timeoutMs)) return
    signal(this.pid, 'SIGKILL')
    await this.waitExit(10_000)
  }
}

// ---------------------------------------------------------------------------------------
// Cleanup registry

export interface TrackedServer {
  /** Temp dir to remove. */
  dir: string
  /** Current server pid, if running. */
  pid(): number | undefined
  /** Signal for an emergency stop (postgres: SIGQUIT = immediate shutdown; clickhouse: SIGKILL). */
  emergencySignal: NodeJS.Signals
  /** Ports to release. */
  ports: number[]
  watchdog?: ChildProcess
}

const WATCHDOG_SCRIPT = `
trap '' INT TERM HUP PIPE
while read -r _; do :; done
pidfile="$1"; dir="$2"; sig="$3"
alive() {
  case "$(cat /proc/$1/stat 2>/dev/null)" in
    "") return 1 ;;
    *") Z "*|*") X "*) return 1 ;;
  esac
  return 0
}
if [ -s "$pidfile" ]; then
  pid="$(cat "$pidfile")"
  kill -"$sig" "$pid" 2>/dev/null
  i=0
  while [ "$i" -lt 100 ] && alive "$pid"; do sleep 0.05; i=$((i + 1)); done
  kill -KILL "$pid" 2>/dev/null
fi
rm -rf "$dir"
`

function emergencyCleanupSync(): void {
  const servers = [...state.live]
  if (servers.length === 0) return
  const pids: number[] = []
  for (const s of servers) {
    const pid = s.pid()
    if (pid) {
      signal(pid, s.emergencySignal)
      pids.push(pid)
    }
  }
  const deadline = Date.now() + 3_000
  while (pids.some(isAlive) && Date.now() < deadline) sleepSync(20)
  for (const pid of pids) if (isAlive(pid)) signal(pid, 'SIGKILL')
  for (const s of servers) {
    try {
      fs.rmSync(s.dir, { recursive: true, force: true, maxRetries: 3 })
    } catch {
      // the watchdog tries again once this process is gone
    }
    state.live.delete(s)
  }
}

function installHandlers(): void {
  if (state.handlersInstalled) return
  state.handlersInstalled = true
  process.on('exit', emergencyCleanupSync)
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = () => {
      emergencyCleanupSync()
      // If nobody else handles this signal, restore the default action and re-raise it
      // so the process still dies the way it would have without us.
      if (process.listenerCount(sig) <= 1) {
        process.removeListener(sig, handler)
        process.kill(process.pid, sig)
      }
    }
    process.on(sig, handler)
  }
}

/** Registers a server for cleanup and starts its watchdog (see the top of this file). */
export function track(server: TrackedServer, pidFile: string): void {
  installHandlers()
  state.live.add(server)
  const sig = server.emergencySignal.replace(/^SIG/, '')
  try {
    const wd = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, 'phog-test-watchdog', pidFile, server.dir, sig], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    })
    wd.once('error', () => undefined)
    wd.stdin?.on('error', () => undefined)
    wd.unref()
    server.watchdog = wd
  } catch {
    // No /bin/sh: the in-process handlers still cover normal exits.
  }
}

/** Unregisters a destroyed server: releases ports and lets its watchdog exit. */
export function untrack(server: TrackedServer): void {
  state.live.delete(server)
  for (const p of server.ports) releasePort(p)
  // Closing the pipe makes the watchdog run its cleanup, which is a no-op now that the
  // pid file and the directory are gone.
  try {
    server.watchdog?.stdin?.end()
  } catch {
    // ignore
  }
}

export function makeTempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}
