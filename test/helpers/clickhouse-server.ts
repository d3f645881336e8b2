// A throwaway, real ClickHouse server for tests: a minimal config in a temp dir, the server
// as a child process on free 127.0.0.1 ports, all output in log files under the temp dir.
//
//   const ch = await startClickHouse()
//   await ch.query('CREATE TABLE t (x UInt8) ENGINE = MergeTree ORDER BY x')
//   ...
//   await ch.destroy()
import fs from 'node:fs'
import path from 'node:path'
import {
  STARTUP_TIMEOUT_MS,
  ServerProcess,
  claimPort,
  ensureBinary,
  fileSize,
  findBinary,
  logTails,
  makeTempDir,
  readFrom,
  releasePort,
  reservePort,
  sleep,
  track,
  untrack,
  type TrackedServer,
} from './server-process'

export interface ClickHouseServer {
  /** http://default:@127.0.0.1:<httpPort> (no database path; the service creates its own database) */
  url: string
  httpPort: number
  tcpPort: number
  dataDir: string
  /** From SELECT version(). */
  version: string
  /** Runs a statement over HTTP (POST body) and returns the response text; throws with ClickHouse's error text on non-200. */
  query(sql: string): Promise<string>
  /** SIGTERM, wait for exit, keep data. */
  stop(): Promise<void>
  /** Starts again on the same ports with the same data and waits for /ping. */
  start(): Promise<void>
  /** SIGKILL, keep data. */
  kill(): Promise<void>
  /** Stops if running and removes the temp dir. Idempotent. */
  destroy(): Promise<void>
}

export interface StartClickHouseOptions {
  httpPort?: number
  tcpPort?: number
  /** Startup timeout in ms (default 60 000). */
  timeoutMs?: number
  /** A port for replication between replicas (interserver_http_port), for a cluster node. */
  interserverPort?: number
  /** More server configuration (XML elements inside <yandex>): a cluster node's remote_servers, macros, zookeeper… */
  extraConfig?: string
  /** A prefix for the temp dir's name. */
  name?: string
}

interface ChCommand {
  command: string
  prefixArgs: string[]
}

function findClickHouse(): ChCommand | undefined {
  const dirs = ['/usr/sbin', '/usr/bin', '/usr/local/bin']
  const server = findBinary('clickhouse-server', dirs)
  // Debian's package ships a real clickhouse-server binary; upstream packages ship a single
  // `clickhouse` binary (clickhouse-server is a symlink to it, which realpath resolves).
  if (server && path.basename(server) !== 'clickhouse') return { command: server, prefixArgs: [] }
  const multi = server ?? findBinary('clickhouse', dirs)
  if (multi) return { command: multi, prefixArgs: ['server'] }
  return undefined
}

function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

class StartError extends Error {
  bindFailure = false
}

class ChServer implements ClickHouseServer, TrackedServer {
  url = ''
  httpPort = 0
  tcpPort = 0
  version = ''
  readonly dataDir: string
  readonly dir: string
  readonly ports: number[] = []
  readonly emergencySignal = 'SIGKILL' as const
  watchdog?: TrackedServer['watchdog']
  readonly pidFile: string

  private proc?: ServerProcess
  private queue: Promise<unknown> = Promise.resolve()
  private destroying?: Promise<void>
  private readonly logDir: string
  private readonly stdoutLog: string
  private readonly serverLog: string
  private readonly errorLog: string
  private readonly configFile: string

  constructor(
    dir: string,
    httpPort: number,
    tcpPort: number,
    private readonly bin: ChCommand,
    private readonly timeoutMs: number,
    private readonly cluster: { interserverPort?: number; extraConfig?: string } = {},
  ) {
    this.dir = dir
    this.dataDir = path.join(dir, 'data')
    this.logDir = path.join(dir, 'log')
    this.stdoutLog = path.join(this.logDir, 'stdout.log')
    this.serverLog = path.join(this.logDir, 'clickhouse-server.log')
    this.errorLog = path.join(this.logDir, 'clickhouse-server.err.log')
    this.configFile = path.join(dir, 'config.xml')
    this.pidFile = path.join(dir, 'server.pid')
    fs.mkdirSync(this.logDir, { recursive: true })
    this.setPorts(httpPort, tcpPort)
  }

  setPorts(httpPort: number, tcpPort: number): void {
    this.httpPort = httpPort
    this.tcpPort = tcpPort
    this.ports.length = 0
    this.ports.push(httpPort, tcpPort)
    if (this.cluster.interserverPort) this.ports.push(this.cluster.interserverPort)
    this.url = `http://default:@127.0.0.1:${httpPort}`
  }

  pid(): number | undefined {
    return this.proc?.running ? this.proc.pid : undefined
  }

  private lock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn)
    this.queue = run.catch(() => undefined)
    return run
  }

  private writeConfig(): void {
    const d = (p: string) => xmlEscape(path.join(this.dir, p) + '/')
    const usersFile = path.join(this.dir, 'users.xml')
    fs.writeFileSync(
      this.configFile,
      `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>information</level>
    <log>${xmlEscape(this.serverLog)}</log>
    <errorlog>${xmlEscape(this.errorLog)}</errorlog>
    <size>100M</size>
    <count>2</count>
  </logger>
  <http_port>${this.httpPort}</http_port>
  <tcp_port>${this.tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${d('data')}</path>
  <tmp_path>${d('tmp')}</tmp_path>
  <user_files_path>${d('user_files')}</user_files_path>
  <format_schema_path>${d('format_schemas')}</format_schema_path>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <max_concurrent_queries>200</max_concurrent_queries>
  <users_config>${xmlEscape(usersFile)}</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
${this.cluster.interserverPort ? `  <interserver_http_port>${this.cluster.interserverPort}</interserver_http_port>\n  <interserver_http_host>127.0.0.1</interserver_http_host>\n` : ''}${this.cluster.extraConfig ?? ''}
</yandex>
`,
    )
    fs.writeFileSync(
      usersFile,
      `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default></default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>::/0</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default>
      <interval>
        <duration>3600</duration>
        <queries>0</queries>
        <errors>0</errors>
        <result_rows>0</result_rows>
        <read_rows>0</read_rows>
        <execution_time>0</execution_time>
      </interval>
    </default>
  </quotas>
</yandex>
`,
    )
  }

  private logs(): string {
    return logTails([this.errorLog, this.stdoutLog, this.serverLog], 30)
  }

  start(): Promise<void> {
    return this.lock(() => this.startLocked())
  }

  private async startLocked(): Promise<void> {
    if (this.destroying) throw new Error('this ClickHouse server has been destroyed')
    if (this.proc?.running) return
    const deadline = Date.now() + this.timeoutMs
    this.writeConfig()
    const offsets = [this.errorLog, this.stdoutLog].map((f) => [f, fileSize(f)] as const)
    const proc = new ServerProcess(this.bin.command, [...this.bin.prefixArgs, `--config-file=${this.configFile}`], {
      cwd: this.dir,
      logFile: this.stdoutLog,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: this.dir, LANG: 'C', TZ: 'UTC' },
      pidFile: this.pidFile,
    })
    this.proc = proc
    let outcome: 'ready' | 'exited' | 'timeout' = 'timeout'
    while (Date.now() < deadline) {
      if (!proc.running) {
        outcome = 'exited'
        break
      }
      if (await this.ping()) {
        outcome = 'ready'
        break
      }
      await sleep(25)
    }
    if (outcome === 'ready') {
      try {
        this.version = (await this.query('SELECT version()')).trim()
        return
      } catch (err) {
        outcome = proc.running ? 'timeout' : 'exited'
        if (outcome === 'timeout') {
          await proc.terminate('SIGKILL', 5_000)
          throw new Error(`ClickHouse answered /ping but not SELECT version(): ${String(err)}\n${this.logs()}`)
        }
      }
    }
    if (proc.running) await proc.terminate('SIGKILL', 5_000)
    const fresh = offsets.map(([f, off]) => readFrom(f, off)).join('\n')
    const why = outcome === 'timeout' ? `did not answer /ping within ${this.timeoutMs} ms` : 'exited during startup'
    const err = new StartError(`ClickHouse (http 127.0.0.1:${this.httpPort}, tcp ${this.tcpPort}) ${why}\n${this.logs()}`)
    err.bindFailure = /Address already in use/i.test(fresh)
    throw err
  }

  private async ping(): Promise<boolean> {
    try {
      const res = await fetch(`http://127.0.0.1:${this.httpPort}/ping`, {
        signal: AbortSignal.timeout(2_000),
        keepalive: false,
        headers: { connection: 'close' },
      })
      const text = await res.text()
      return res.status === 200 && text.startsWith('Ok.')
    } catch {
      return false
    }
  }

  async query(sql: string): Promise<string> {
    // No keep-alive: pooled connections would go stale across stop()/start().
    const res = await fetch(`http://127.0.0.1:${this.httpPort}/`, {
      method: 'POST',
      body: sql,
      keepalive: false,
      headers: { connection: 'close', 'content-type': 'text/plain; charset=utf-8' },
    })
    const text = await res.text()
    if (res.status !== 200) {
      throw new Error(`ClickHouse query failed (HTTP ${res.status}): ${text.trim()}\nQuery: ${sql.slice(0, 500)}`)
    }
    return text
  }

  stop(): Promise<void> {
    return this.lock(async () => {
      await this.proc?.terminate('SIGTERM', 60_000)
    })
  }

  kill(): Promise<void> {
    return this.lock(async () => {
      await this.proc?.terminate('SIGKILL', 10_000)
    })
  }

  destroy(): Promise<void> {
    this.destroying ??= this.lock(async () => {
      // The data is thrown away, so there is no point in a graceful shutdown.
      await this.proc?.terminate('SIGKILL', 10_000)
      fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 })
      untrack(this)
    })
    return this.destroying
  }
}

export async function startClickHouse(opts: StartClickHouseOptions = {}): Promise<ClickHouseServer> {
  const bin = await ensureBinary('The ClickHouse server', findClickHouse, ['clickhouse-server', 'clickhouse-client'])
  const timeoutMs = opts.timeoutMs ?? STARTUP_TIMEOUT_MS
  const explicitPorts = opts.httpPort !== undefined || opts.tcpPort !== undefined
  const pickPorts = async (): Promise<[number, number]> => {
    let http: number
    let tcp: number
    if (opts.httpPort !== undefined) {
      http = opts.httpPort
      claimPort(http)
    } else {
      http = await reservePort()
    }
    if (opts.tcpPort !== undefined) {
      tcp = opts.tcpPort
      claimPort(tcp)
    } else {
      tcp = await reservePort()
    }
    return [http, tcp]
  }

  const dir = makeTempDir(opts.name ?? 'phog-ch-')
  const [http, tcp] = await pickPorts()
  if (opts.interserverPort !== undefined) claimPort(opts.interserverPort)
  const server = new ChServer(dir, http, tcp, bin, timeoutMs, { interserverPort: opts.interserverPort, extraConfig: opts.extraConfig })
  track(server, server.pidFile)
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await server.start()
        break
      } catch (err) {
        // Someone else grabbed a port between probing and binding: take new ones.
        if (!explicitPorts && err instanceof StartError && err.bindFailure && attempt < 4) {
          for (const p of server.ports) releasePort(p)
          const [h, t] = await pickPorts()
          server.setPorts(h, t)
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
