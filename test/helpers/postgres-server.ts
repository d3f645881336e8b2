// A throwaway, real Postgres server for tests: initdb into a temp dir, run `postgres` as a
// child process on a free 127.0.0.1 port with trust auth, tear it down again.
//
//   const pg = await startPostgres()
//   const url = await pg.createDatabase()   // isolated database on the shared server
//   ...
//   await pg.destroy()
//
// Postgres refuses to run as root: when the tests run as root, initdb and the server run
// as the `postgres` system user (the temp dir is chowned to it).
import fs from 'node:fs'
import path from 'node:path'
import postgres from 'postgres'
import {
  STARTUP_TIMEOUT_MS,
  ServerProcess,
  childPids,
  claimPort,
  ensureBinary,
  fileSize,
  findBinary,
  isRoot,
  logTails,
  makeTempDir,
  readFrom,
  releasePort,
  reservePort,
  signal,
  sleep,
  track,
  untrack,
  waitGone,
  type TrackedServer,
} from './server-process'

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust auth) */
  url: string
  port: number
  dataDir: string
  /** CREATE DATABASE (unique name when omitted; else [A-Za-z_][A-Za-z0-9_$-]*, case kept); returns its URL. */
  createDatabase(name?: string): Promise<string>
  /** Fast shutdown (what `pg_ctl stop -m fast` does: SIGINT to the postmaster); keeps the data dir. */
  stop(): Promise<void>
  /** Starts again on the same port and waits until it accepts connections. */
  start(): Promise<void>
  /** SIGKILLs the postmaster (a crash); keeps the data. Returns once its children are gone too. */
  kill(): Promise<void>
  /** Stops if running and removes the temp dir. Idempotent. */
  destroy(): Promise<void>
}

export interface StartPostgresOptions {
  /** Fixed port; a free one is picked when omitted. */
  port?: number
  /** Startup timeout in ms (default 60 000). */
  timeoutMs?: number
}

const READY_LINE = 'database system is ready to accept connections'

interface PgBinaries {
  initdb: string
  postgres: string
}

function findPgBinaries(): PgBinaries | undefined {
  const dirs: string[] = []
  try {
    const versions = fs
      .readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
    for (const v of versions) dirs.push(`/usr/lib/postgresql/${v}/bin`)
  } catch {
    // not a Debian layout
  }
  const initdbOnPath = findBinary('initdb')
  if (initdbOnPath) dirs.push(path.dirname(initdbOnPath))
  for (const dir of dirs) {
    const initdb = path.join(dir, 'initdb')
    const pg = path.join(dir, 'postgres')
    if (fs.existsSync(initdb) && fs.existsSync(pg)) return { initdb, postgres: pg }
  }
  return undefined
}

interface Ids {
  uid: number
  gid: number
}

/** uid/gid of the `postgres` system user (needed when running as root). */
function postgresIds(): Ids {
  let passwd = ''
  try {
    passwd = fs.readFileSync('/etc/passwd', 'utf8')
  } catch {
    // fall through
  }
  for (const line of passwd.split('\n')) {
    const f = line.split(':')
    if (f[0] === 'postgres' && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) }
  }
  throw new Error(
    'Postgres refuses to run as root and there is no `postgres` system user to run it as. ' +
      'Install the server package with `apt-get install -y postgresql` (it creates the user), ' +
      'or run the tests as a non-root user.',
  )
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

class StartError extends Error {
  bindFailure = false
}

let dbCounter = 0

class PgServer implements PostgresServer, TrackedServer {
  url = ''
  port: number
  readonly dataDir: string
  readonly dir: string
  readonly ports: number[] = []
  readonly emergencySignal = 'SIGQUIT' as const
  watchdog?: TrackedServer['watchdog']

  private proc?: ServerProcess
  private queue: Promise<unknown> = Promise.resolve()
  private destroying?: Promise<void>
  private readonly logFile: string
  readonly pidFile: string

  constructor(
    dir: string,
    port: number,
    private readonly bins: PgBinaries,
    private readonly ids: Ids | undefined,
    private readonly timeoutMs: number,
  ) {
    this.dir = dir
    this.dataDir = path.join(dir, 'data')
    this.logFile = path.join(dir, 'postgres.log')
    this.pidFile = path.join(dir, 'server.pid')
    this.port = port
    this.setPort(port)
  }

  setPort(port: number): void {
    this.port = port
    this.ports.length = 0
    this.ports.push(port)
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`
  }

  pid(): number | undefined {
    return this.proc?.running ? this.proc.pid : undefined
  }

  private env(): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.dir,
      LANG: 'C',
      LC_ALL: 'C',
      TZ: 'UTC',
    }
  }

  /** Serialises lifecycle operations on this server. */
  private lock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn)
    this.queue = run.catch(() => undefined)
    return run
  }

  async init(): Promise<void> {
    const logFile = path.join(this.dir, 'initdb.log')
    const proc = new ServerProcess(
      this.bins.initdb,
      ['-D', this.dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
      { cwd: this.dir, logFile, env: this.env(), uid: this.ids?.uid, gid: this.ids?.gid, pidFile: path.join(this.dir, 'initdb.pid') },
    )
    if (!(await proc.waitExit(this.timeoutMs))) {
      await proc.terminate('SIGKILL', 1_000)
      throw new Error(`initdb timed out after ${this.timeoutMs} ms\n${logTails([logFile])}`)
    }
    const info = await proc.exited
    if (info.code !== 0) {
      throw new Error(`initdb failed (exit ${info.code ?? info.signal})\n${logTails([logFile])}`)
    }
  }

  start(): Promise<void> {
    return this.lock(() => this.startLocked())
  }

  private async startLocked(): Promise<void> {
    if (this.destroying) throw new Error('this Postgres server has been destroyed')
    if (this.proc?.running) return
    const deadline = Date.now() + this.timeoutMs
    for (;;) {
      const offset = fileSize(this.logFile)
      const proc = new ServerProcess(
        this.bins.postgres,
        [
          '-D', this.dataDir,
          '-p', String(this.port),
          '-c', 'listen_addresses=127.0.0.1',
          '-k', this.dir,
          '-c', 'fsync=off',
          '-c', 'max_connections=300',
          '-c', 'unix_socket_permissions=0777',
        ],
        { cwd: this.dir, logFile: this.logFile, env: this.env(), uid: this.ids?.uid, gid: this.ids?.gid, pidFile: this.pidFile },
      )
      this.proc = proc
      let outcome: 'ready' | 'exited' | 'timeout' = 'timeout'
      while (Date.now() < deadline) {
        if (readFrom(this.logFile, offset).includes(READY_LINE)) {
          outcome = 'ready'
          break
        }
        if (!proc.running) {
          outcome = 'exited'
          break
        }
        await sleep(20)
      }
      if (outcome === 'ready') {
        if (await this.ping(deadline)) return
        outcome = proc.running ? 'timeout' : 'exited'
      }
      const text = readFrom(this.logFile, offset)
      // Leftovers of a crashed postmaster (its children still hold the shared memory):
      // wait a moment and try again.
      if (outcome === 'exited' && /pre-existing shared memory block|is still in use/.test(text) && Date.now() < deadline) {
        await sleep(200)
        continue
      }
      if (proc.running) await proc.terminate('SIGQUIT', 5_000)
      const why = outcome === 'timeout' ? `did not accept connections within ${this.timeoutMs} ms` : 'exited during startup'
      const err = new StartError(`Postgres on 127.0.0.1:${this.port} ${why}\n${logTails([this.logFile])}`)
      err.bindFailure = /could not bind|Address already in use|could not create any TCP\/IP sockets/.test(text)
      throw err
    }
  }

  /** One real query over TCP, retried until the deadline. */
  private async ping(deadline: number): Promise<boolean> {
    while (Date.now() < deadline && this.proc?.running) {
      const sql = postgres(this.url, { max: 1, connect_timeout: 5, onnotice: () => undefined })
      try {
        await sql`select 1`
        return true
      } catch {
        await sleep(50)
      } finally {
        await sql.end({ timeout: 1 }).catch(() => undefined)
      }
    }
    return false
  }

  stop(): Promise<void> {
    return this.lock(async () => {
      // SIGINT is Postgres' "fast" shutdown, the same as `pg_ctl stop -m fast`.
      await this.proc?.terminate('SIGINT', 60_000)
    })
  }

  kill(): Promise<void> {
    return this.lock(async () => {
      const proc = this.proc
      if (!proc?.running) return
      const children = childPids(proc.pid)
      signal(proc.pid, 'SIGKILL')
      await proc.waitExit(10_000)
      // The orphaned backends notice the postmaster's death and exit by themselves; a new
      // postmaster cannot start while they still hold the old shared memory.
      const left = await waitGone(children, 10_000)
      for (const pid of left) signal(pid, 'SIGKILL')
      await waitGone(left, 5_000)
    })
  }

  destroy(): Promise<void> {
    this.destroying ??= this.lock(async () => {
      const proc = this.proc
      if (proc?.running) {
        const children = childPids(proc.pid)
        await proc.terminate('SIGQUIT', 10_000) // immediate shutdown: the data is thrown away
        const left = await waitGone(children, 5_000)
        for (const pid of left) signal(pid, 'SIGKILL')
      }
      fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 })
      untrack(this)
    })
    return this.destroying
  }

  async createDatabase(name?: string): Promise<string> {
    const db = name ?? `phog_test_${process.pid}_${++dbCounter}_${Math.random().toString(36).slice(2, 8)}`
    // Only names that need no escaping in a URL: postgres.js does not percent-decode the
    // database part of a connection URL.
    if (!/^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/.test(db)) {
      throw new Error(`createDatabase: ${JSON.stringify(db)} is not a plain database name ([A-Za-z_][A-Za-z0-9_$-]*, at most 63 chars)`)
    }
    const sql = postgres(this.url, { max: 1, connect_timeout: 10, onnotice: () => undefined })
    try {
      await sql.unsafe(`CREATE DATABASE ${quoteIdent(db)}`)
    } finally {
      await sql.end({ timeout: 1 }).catch(() => undefined)
    }
    return `postgres://postgres@127.0.0.1:${this.port}/${db}`
  }
}

export async function startPostgres(opts: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bins = await ensureBinary('The Postgres server (initdb, postgres)', findPgBinaries, ['postgresql'])
  const ids = isRoot() ? postgresIds() : undefined
  const timeoutMs = opts.timeoutMs ?? STARTUP_TIMEOUT_MS
  const explicitPort = opts.port !== undefined
  let port: number
  if (opts.port !== undefined) {
    port = opts.port
    claimPort(port)
  } else {
    port = await reservePort()
  }

  const dir = makeTempDir('phog-pg-')
  fs.chmodSync(dir, 0o700)
  if (ids) fs.chownSync(dir, ids.uid, ids.gid)
  const server = new PgServer(dir, port, bins, ids, timeoutMs)
  track(server, server.pidFile)
  try {
    await server.init()
    for (let attempt = 0; ; attempt++) {
      try {
        await server.start()
        break
      } catch (err) {
        // Someone else grabbed the port between probing and binding: take another one.
        if (!explicitPort && err instanceof StartError && err.bindFailure && attempt < 4) {
          releasePort(server.port)
          server.setPort(await reservePort())
          continue
        }
        throw err
      }
    }
  } catch (err) {
    await server.destroy().catch(() => undefined)
    throw err
  }
  return server
}
