// The CLI's key commands, with a running server (which must refuse the old credentials within KEY_CHANGE_CHECK_MS)
// and without one.
import { describe, expect, test } from 'bun:test'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { runCli, spawnService } from '../helpers/spawn-service'

function onlyJson(stdout: string): any {
  const lines = stdout.trim().split('\n')
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0])
}

async function statusWithin(ms: number, expected: number, request: () => Promise<Response>): Promise<number> {
  const until = Date.now() + ms
  for (;;) {
    const status = (await request()).status
    if (status === expected || Date.now() > until) return status
    await Bun.sleep(50)
  }
}

describe('cli key commands', () => {
  test('with a running embedded server: list, reset-token, revoke and roll are seen by the server; then without it', async () => {
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    const server = await spawnService({ ...env, KEY_CHANGE_CHECK_MS: '200' })
    const capture = (token: string) =>
      fetch(`${server.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: token, event: 'e', distinct_id: 'd' }) })
    const projects = (key: string) => fetch(`${server.url}/api/projects/`, { headers: { authorization: `Bearer ${key}` } })
    try {
      const list = onlyJson((await runCli(['project', 'list'], env)).stdout)
      expect(list.results).toEqual([expect.objectContaining({ id: 1, api_token: PROJECT_KEY })])

      expect((await capture(PROJECT_KEY)).status).toBe(200)
      const reset = await runCli(['project', 'reset-token', '--id', '1'], env)
      expect(reset.code).toBe(0)
      const { id, api_token } = onlyJson(reset.stdout)
      expect(id).toBe(1)
      expect(api_token).toMatch(/^phc_/)
      expect(await statusWithin(2_000, 401, () => capture(PROJECT_KEY))).toBe(401)
      expect((await capture(api_token)).status).toBe(200)

      const created = onlyJson((await runCli(['personal-key', 'create', '--label', 'to-roll'], env)).stdout)
      const keys = onlyJson((await runCli(['personal-key', 'list'], env)).stdout).results
      expect(keys.every((k: { value: unknown; mask_value: string }) => k.value === null && /^phx_\.\.\./.test(k.mask_value))).toBe(true)
      const bootstrapKey = keys.find((k: { label: string }) => k.label === 'bootstrap')
      const rolledKey = keys.find((k: { label: string }) => k.label === 'to-roll')

      expect((await projects(created.key)).status).toBe(200)
      const rolled = onlyJson((await runCli(['personal-key', 'roll', '--id', rolledKey.id], env)).stdout)
      expect(rolled.id).toBe(rolledKey.id)
      expect(rolled.value).toMatch(/^phx_/)
      expect((await projects(created.key)).status).toBe(401)
      expect((await projects(rolled.value)).status).toBe(200)

      expect((await projects(PERSONAL_KEY)).status).toBe(200)
      const revoked = await runCli(['personal-key', 'revoke', '--id', bootstrapKey.id], env)
      expect(onlyJson(revoked.stdout)).toEqual({ id: bootstrapKey.id, revoked: true })
      expect((await projects(PERSONAL_KEY)).status).toBe(401)
    } finally {
      expect(await server.stop()).toBe(0)
    }
    // without a server; and a reboot with the same INIT_* keys does not bring back the revoked or reset ones
    const again = await runCli(['personal-key', 'revoke', '--id', '00000000-0000-0000-0000-000000000000'], env)
    expect(again.code).toBe(1)
    const restarted = await spawnService(env)
    try {
      expect((await fetch(`${restarted.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'e', distinct_id: 'd' }) })).status).toBe(401)
      expect((await fetch(`${restarted.url}/api/projects/`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })).status).toBe(401)
    } finally {
      expect(await restarted.stop()).toBe(0)
    }
    const listed = onlyJson((await runCli(['project', 'list'], env)).stdout)
    expect(listed.results).toHaveLength(1)
    expect(listed.results[0].api_token).not.toBe(PROJECT_KEY)
  })
})
