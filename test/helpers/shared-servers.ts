// One Postgres and one ClickHouse per test process, started on first use and shared by
// every test file (Bun runs all test files in one process by default).
//
// Isolation is the caller's job: take a database of your own with
// `(await sharedPostgres()).createDatabase()`, and a ClickHouse database name of your own.
// Do not stop()/kill()/destroy() a shared server from a test; chaos tests should start
// their own with startPostgres()/startClickHouse().
//
// Teardown: `bun test` does not run process 'exit' listeners, so the servers are stopped by
// the per-server watchdog (see server-process.ts) as soon as the test process ends,
// whether the tests passed, failed or the process was killed. The in-process
// 'exit'/SIGINT/SIGTERM handlers cover `bun run` and Ctrl-C. A preload file may also call
// stopSharedServers() from a global afterAll for an orderly shutdown.
import { startClickHouse, type ClickHouseServer } from './clickhouse-server'
import { startPostgres, type PostgresServer } from './postgres-server'

interface SharedState {
  postgres?: Promise<PostgresServer>
  clickhouse?: Promise<ClickHouseServer>
}

// On globalThis so that every importer in the process sees the same instances, even if
// this module were evaluated more than once.
const KEY = Symbol.for('phog.test.shared-servers')
const g = globalThis as unknown as Record<symbol, SharedState | undefined>
const shared: SharedState = (g[KEY] ??= {})

/** The process-wide Postgres server (started lazily; the same instance for every caller). */
export function sharedPostgres(): Promise<PostgresServer> {
  // A failed start is remembered too, so that every test file reports the same error
  // quickly instead of each waiting for its own startup timeout.
  shared.postgres ??= startPostgres()
  return shared.postgres
}

/** The process-wide ClickHouse server (started lazily; the same instance for every caller). */
export function sharedClickHouse(): Promise<ClickHouseServer> {
  shared.clickhouse ??= startClickHouse()
  return shared.clickhouse
}

/** Destroys the shared servers (if started). The next shared*() call starts fresh ones. */
export async function stopSharedServers(): Promise<void> {
  const { postgres, clickhouse } = shared
  shared.postgres = undefined
  shared.clickhouse = undefined
  await Promise.all(
    [postgres, clickhouse].map(async (p) => {
      if (!p) return
      try {
        await (await p).destroy()
      } catch {
        // it never started
      }
    }),
  )
}
