// A current ClickHouse engine for the tests of the modern path: chDB (the npm package `chdb`, ClickHouse in-process,
// no server). It is large (~550 MB), so it lives in its own package, test/chdb/, installed on demand:
//
//   npm ci --prefix test/chdb
//
// When it is missing, the tests that need it are skipped with the reason printed, or fail when PHOG_REQUIRE_CHDB=1
// (CI sets it). Everything in one process shares one engine (chDB binds one data directory per process and cannot
// be unloaded); each test takes a database of its own.
//
//   describeWithChdb('my modern tests', () => {
//     test('…', async () => { const store = new ClickHouseEventStore(chdbUrl('mine'), { client: chdbClient() }) })
//   })
//
// chDB is not a server, and the adapter below makes it behave like one where the service cares:
// - chDB's connection for @clickhouse/client runs per-call `clickhouse_settings` as session SETs that persist (an
//   insert's deduplication token would silently drop the next insert): they are reset after every call, and
//   calls are serialised so that one call's settings never leak into another's;
// - its defaults differ from a server's: date_time_input_format=basic and async_insert=0 make it parse and insert
//   as a server does;
// - with async_insert=0 it reads the process's stdin as the data of an INSERT: stdin is pointed at /dev/null first;
// - it must not be loaded on a worker thread that is later terminated, so it is only ever loaded here, on the
//   test's main thread, and never closed.
import { createClient, type ClickHouseClient } from '@clickhouse/client'
import { describe, test } from 'bun:test'
import { existsSync, openSync, readlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { ROOT } from './spawn-service'
import { tempDir } from './temp'

export const CHDB_PACKAGE_DIR = join(ROOT, 'test/chdb')
const INSTALL_HINT = 'npm ci --prefix test/chdb'

type Connection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>
type Settings = Record<string, unknown> | undefined

/** Why chDB cannot be used here, or null when it can. */
export function chdbMissingReason(): string | null {
  if (!existsSync(join(CHDB_PACKAGE_DIR, 'node_modules/chdb/package.json'))) {
    return `chDB (the ClickHouse 26.7 engine, in-process) is not installed; install it with \`${INSTALL_HINT}\``
  }
  if (process.platform !== 'linux' && process.platform !== 'darwin') return `chDB has no build for ${process.platform}`
  return null
}

/**
 * A describe() for tests that need chDB: run when it is installed; when it is not, a failing test when
 * PHOG_REQUIRE_CHDB=1, otherwise skipped with the reason printed.
 */
export function describeWithChdb(name: string, body: () => void): void {
  const missing = chdbMissingReason()
  if (!missing) return describe(name, body)
  if (process.env.PHOG_REQUIRE_CHDB === '1') {
    return describe(name, () => {
      test('chDB is installed (PHOG_REQUIRE_CHDB=1)', () => {
        throw new Error(missing)
      })
    })
  }
  console.warn(`skipping "${name}": ${missing}`)
  describe.skip(name, body) // chDB not installed here (npm ci --prefix test/chdb); CI sets PHOG_REQUIRE_CHDB=1 and fails instead
}

/** A CLICKHOUSE_URL naming a database on the in-process engine (the host part is never contacted). */
export function chdbUrl(database: string): string {
  return `http://default:@chdb.invalid:8123/${database}`
}

// The data directory, the session and the client, once per process (kept on globalThis in case this module is
// evaluated twice).
const KEY = Symbol.for('phog.test.chdb')
const g = globalThis as unknown as Record<symbol, ClickHouseClient | undefined>

/** The process-wide client on the in-process engine. Never close it. */
export function chdbClient(): ClickHouseClient {
  const existing = g[KEY]
  if (existing) return existing
  const missing = chdbMissingReason()
  if (missing) throw new Error(missing)
  detachStdin()
  const requireFromChdb = createRequire(join(CHDB_PACKAGE_DIR, 'package.json'))
  const { createChdbConnection } = requireFromChdb('chdb/connection') as {
    createChdbConnection(options: { path: string }): Connection
  }
  const connection = new ServerLikeConnection(createChdbConnection({ path: tempDir('phog-chdb-') }))
  const client = createClient({ connection })
  g[KEY] = client
  return client
}

/** Point fd 0 at /dev/null (chDB reads a non-terminal stdin as INSERT data). */
function detachStdin(): void {
  try {
    if (readlinkSync('/proc/self/fd/0') === '/dev/null') return
  } catch {
    // no /proc: do it anyway
  }
  const { dlopen, FFIType } = require('bun:ffi') as typeof import('bun:ffi')
  const libc = dlopen(process.platform === 'darwin' ? 'libc.dylib' : 'libc.so.6', {
    dup2: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  })
  if (libc.symbols.dup2(openSync('/dev/null', 'r'), 0) !== 0) throw new Error('could not point stdin at /dev/null for chDB')
}

/** What the session is reset to after a call: a server's behaviour, where chDB's defaults differ. */
const SERVER_DEFAULTS: Record<string, string | number> = { date_time_input_format: 'basic', async_insert: 0 }

const literal = (v: string | number) => (typeof v === 'number' ? String(v) : `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`)

/** chDB's connection made to behave like a server's: per-call settings stay per call, calls one at a time. */
class ServerLikeConnection implements Connection {
  private queue: Promise<unknown> = Promise.resolve()
  private engineSettings: Set<string> | undefined

  constructor(private readonly inner: Connection) {}

  private serial<T>(settings: Settings, call: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      await this.prepare()
      try {
        return await call()
      } finally {
        await this.reset(settings)
      }
    })
    this.queue = run.catch(() => undefined)
    return run
  }

  private async prepare(): Promise<void> {
    if (this.engineSettings) return
    for (const [name, value] of Object.entries(SERVER_DEFAULTS)) await this.inner.command({ query: `SET ${name} = ${literal(value)}` })
    const rs = await this.inner.query({ query: 'SELECT name FROM system.settings FORMAT TSV' })
    const names = await streamText(rs.stream as Readable)
    this.engineSettings = new Set(names.split('\n').filter(Boolean))
  }

  /** Undo the SETs chDB turned this call's settings into (settings the engine does not know were never SET). */
  private async reset(settings: Settings): Promise<void> {
    for (const name of Object.keys(settings ?? {})) {
      if (!this.engineSettings?.has(name)) continue
      const back = SERVER_DEFAULTS[name]
      await this.inner.command({ query: `SET ${name} = ${back === undefined ? 'DEFAULT' : literal(back)}` })
    }
  }

  ping(params: Parameters<Connection['ping']>[0]) {
    return this.serial(undefined, () => this.inner.ping(params))
  }
  query(params: Parameters<Connection['query']>[0]) {
    return this.serial(params.clickhouse_settings, () => this.inner.query(params))
  }
  insert(params: Parameters<Connection['insert']>[0]) {
    return this.serial(params.clickhouse_settings, () => this.inner.insert(params))
  }
  command(params: Parameters<Connection['command']>[0]) {
    return this.serial(params.clickhouse_settings, () => this.inner.command(params))
  }
  exec(params: Parameters<Connection['exec']>[0]) {
    return this.serial(params.clickhouse_settings, () => this.inner.exec(params))
  }
  async close(): Promise<void> {
    // The engine lives as long as the process: a closed session cannot be reopened on its data directory.
  }
}

async function streamText(stream: Readable): Promise<string> {
  let text = ''
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
  return text
}
