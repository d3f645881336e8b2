// The service built in-process against real or embedded stores, for integration tests.
import { Database } from 'bun:sqlite'
import { cpSync, rmSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { createApp, type App } from '../../src/app'
import { configWith, type Config } from '../../src/config'
import { migratePostgres } from '../../src/db/migrate'
import { openDatabase } from '../../src/db/postgres'
import { silentLogger } from '../../src/log'
import { createMetrics } from '../../src/ops/metrics'
import { startServices, type Services } from '../../src/services'
import { auditInserts } from './clickhouse-audit'
import { sharedClickHouse } from './shared-servers'
import { sharedPostgres } from './shared-servers'
import { tempDir } from './temp'

export const PROJECT_KEY = 'phc_test_project_key_0001'
export const PERSONAL_KEY = 'phx_test_personal_key_0001'
export const BASE = 'http://localhost'

export type StoreChoice = 'real' | 'embedded'

export interface Stack {
  services: Services
  app: App
  config: Config
  dataDir: string
  /** app.handle with the test's personal key (unless headers say otherwise) */
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>
  close(): Promise<void>
}

let template: Promise<string> | undefined

/** A migrated PGlite data directory made once per test process; copying it beats initdb (3–5 s) per test. */
function embeddedTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = tempDir('phog-pgtemplate-')
    const db = await openDatabase({ dataDir: dir, poolMax: 2 })
    await migratePostgres(db.sql)
    await db.close()
    return dir
  })()
  return template
}

export async function freshDataDir(postgres: StoreChoice): Promise<string> {
  const dataDir = tempDir('phog-test-')
  if (postgres === 'embedded') {
    const source = join(await embeddedTemplate(), 'pg')
    if (existsSync(source)) cpSync(source, join(dataDir, 'pg'), { recursive: true })
  }
  return dataDir
}

/** Environment for a service on fresh stores: a new Postgres database and a new ClickHouse database. */
export async function freshEnv(choice: { postgres: StoreChoice; clickhouse: StoreChoice }): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    DATA_DIR: await freshDataDir(choice.postgres),
    INIT_PROJECT_API_KEY: PROJECT_KEY,
    INIT_PERSONAL_API_KEY: PERSONAL_KEY,
    LOG_LEVEL: 'silent',
    // events of other months are held this long on ClickHouse before they are written (history-writer.ts)
    HISTORY_HOLD_MS: '50',
  }
  if (choice.postgres === 'real') env.DATABASE_URL = await (await sharedPostgres()).createDatabase()
  if (choice.clickhouse === 'real') {
    const ch = await sharedClickHouse()
    env.CLICKHOUSE_URL = `${ch.url}/test_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`
    await auditInserts(env.CLICKHOUSE_URL)
  }
  return env
}

export async function startStack(
  choice: { postgres: StoreChoice; clickhouse: StoreChoice },
  overrides: Record<string, string | number | boolean> = {},
): Promise<Stack> {
  const env = { ...(await freshEnv(choice)), ...overrides }
  const config = configWith(env as Record<string, string>)
  const services = await startServices(config, silentLogger, { metrics: createMetrics() })
  const app = createApp(services)
  return {
    services,
    app,
    config,
    dataDir: config.DATA_DIR,
    api(path, init = {}) {
      const headers = new Headers(init.headers)
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${PERSONAL_KEY}`)
      let body = init.body
      if (init.json !== undefined) {
        body = JSON.stringify(init.json)
        headers.set('content-type', 'application/json')
      }
      return app.handle(new Request(`${BASE}${path}`, { ...init, headers, body }))
    },
    async close() {
      await services.close()
      rmSync(config.DATA_DIR, { recursive: true, force: true })
    },
  }
}

export async function json<T = any>(response: Response | Promise<Response>): Promise<T> {
  const r = await response
  const text = await r.text()
  try {
    return JSON.parse(text) as T
  } catch {
    throw new Error(`expected JSON, got ${r.status}: ${text.slice(0, 300)}`)
  }
}

/** Wait until the flush worker has learned everything captured so far. */
export async function learned(stack: Stack, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const stats = stack.services.captureLog.stats()
    const done = (name: string) => stats.consumers[name] === undefined || stats.consumers[name]!.position === stats.lastSeq
    if (done('learn') && done('store') && done('store_history')) return
    await Bun.sleep(25)
  }
  throw new Error(`not learned in time: ${JSON.stringify(stack.services.captureLog.stats())}`)
}

/** The embedded event store's SQLite file, opened once the flush worker has made its events table (for seeding rows). */
export async function embeddedEvents(stack: Stack): Promise<Database> {
  const db = new Database(join(stack.dataDir, 'events.sqlite'))
  db.run('PRAGMA busy_timeout = 5000')
  for (let tries = 0; tries < 100; tries++) {
    try {
      db.query('SELECT 1 FROM events LIMIT 1').all()
      return db
    } catch {
      await Bun.sleep(100) // the flush worker creates the table
    }
  }
  db.close()
  throw new Error('the embedded event store made no events table within 10 s')
}
