// Loaded before every test file (bunfig.toml). Bun skips process 'exit' listeners under `bun test`,
// so the orderly teardown of servers the tests started lives in a global afterAll.
import { afterAll } from 'bun:test'
import { stopSharedServers } from './shared-servers'
import { killSpawnedServices } from './spawn-service'
import { removeTempDirs } from './temp'

afterAll(async () => {
  await killSpawnedServices()
  await stopSharedServers()
  removeTempDirs()
})
