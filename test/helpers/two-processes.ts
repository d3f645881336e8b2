// Two server processes sharing one fresh Postgres database and nothing else (each has its own data directory, so
// its own write-ahead log): what one writes, the other can learn only through Postgres.
import { afterAll, beforeAll } from 'bun:test'
import { spawnService, type ServiceProcess } from './spawn-service'
import { freshDataDir, freshEnv } from './stack'

export interface ProcessPair {
  a: ServiceProcess
  b: ServiceProcess
}

/** Called in a describe: the pair is started before its tests and stopped after them. */
export function twoProcessesOnOnePostgres(): ProcessPair {
  const pair = {} as ProcessPair
  beforeAll(async () => {
    const env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
    pair.a = await spawnService({ ...env, LOG_LEVEL: 'warn' })
    pair.b = await spawnService({ ...env, DATA_DIR: await freshDataDir('real'), LOG_LEVEL: 'warn' })
  })
  afterAll(async () => {
    await Promise.all([pair.a?.stop(), pair.b?.stop()])
  })
  return pair
}
