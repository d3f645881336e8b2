// Two server processes sharing one fresh Postgres database and nothing else (each has its own data directory, so
// its own write-ahead log): what one writes, the other can learn only through Postgres.
import { spawnService, type ServiceProcess } from './spawn-service'
import { freshDataDir, freshEnv } from './stack'

export async function twoProcessesOnOnePostgres(): Promise<{ a: ServiceProcess; b: ServiceProcess }> {
  const env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
  const a = await spawnService({ ...env, LOG_LEVEL: 'warn' })
  const b = await spawnService({ ...env, DATA_DIR: await freshDataDir('real'), LOG_LEVEL: 'warn' })
  return { a, b }
}
