// The production command outside the image, bin/phog-server, runs Bun with no npm in between: the pid a
// supervisor holds is Bun's own. SIGKILL to it leaves nothing in its process group and the port free for the
// next start (with `npm start`, SIGKILL to npm orphaned Bun, which kept the port); SIGTERM drains and exits 0.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { groupMembers, healthy } from '../helpers/process-watch'
import { freePort, ROOT } from '../helpers/spawn-service'
import { freshEnv } from '../helpers/stack'

test('bin/phog-server: SIGKILL leaves nothing behind and the next start gets the port; SIGTERM exits 0', async () => {
  const env = { ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'info' }
  const url = `http://127.0.0.1:${env.PORT}`
  const start = () => Bun.spawn(['setsid', join(ROOT, 'bin/phog-server')], { cwd: '/', env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'pipe' })

  const first = start()
  expect(await healthy(url, 120_000)).toBe(true)
  // the spawned pid is Bun itself (the script exec'd it), leading its own process group
  expect(readFileSync(`/proc/${first.pid}/cmdline`, 'utf8').split('\0')).toContain('src/main.ts')
  first.kill('SIGKILL')
  await first.exited
  await Bun.sleep(200)
  expect(groupMembers(first.pid)).toEqual([])

  const second = start()
  const logs = new Response(second.stderr).text()
  expect(await healthy(url, 120_000)).toBe(true)
  second.kill('SIGTERM')
  expect(await second.exited).toBe(0)
  expect(await logs).not.toContain('in use')
  expect(groupMembers(second.pid)).toEqual([])
})
