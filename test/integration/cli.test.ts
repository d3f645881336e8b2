// The admin CLI as a user runs it, on the embedded store (with and without a running server) and on real Postgres.
import { describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freshEnv } from '../helpers/stack'
import { runCli, spawnService } from '../helpers/spawn-service'

function onlyJson(stdout: string): any {
  const lines = stdout.trim().split('\n')
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0])
}

describe('cli', () => {
  test('dlq replay counts only rows the store kept: a row the embedded store skips stays dead-lettered with the reason', async () => {
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    const dir = join(env.DATA_DIR, 'dlq')
    mkdirSync(dir, { recursive: true })
    const row = (uuid: string, event: string | null) => ({ uuid, teamId: 1, event, distinctId: 'd', properties: '{}', timestamp: Date.now(), createdAt: Date.now(), personId: null })
    const good = crypto.randomUUID()
    const bad = crypto.randomUUID()
    const letters = [row(good, 'fine'), row(bad, null)].map((event) => JSON.stringify({ reason: 'rejected_by_store', error: 'x', failed_at: new Date().toISOString(), event }))
    writeFileSync(join(dir, 'dlq-2026-01-01.jsonl'), `${letters.join('\n')}\n`)
    const replay = await runCli(['dlq', 'replay'], env)
    expect(replay.code).toBe(0)
    expect(onlyJson(replay.stdout)).toEqual({ files: 1, replayed: 1, failed: 1 })
    const listed = onlyJson((await runCli(['dlq', 'list'], env)).stdout)
    expect(listed.events).toBe(1)
    expect(Object.keys(listed.files[0].reasons)).toEqual([expect.stringMatching(/^(not_kept_by_store|replay_failed)$/)])
  })

  test('on the embedded store with no server running: project, personal key, migrate', async () => {
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    const project = await runCli(['project', 'create', '--name', 'Shop'], env)
    expect(project.code).toBe(0)
    const created = onlyJson(project.stdout)
    expect(created).toEqual({ id: expect.any(Number), api_token: expect.stringMatching(/^phc_[0-9A-Za-z]{40,}$/) })
    const key = await runCli(['personal-key', 'create', '--label', 'ci'], env)
    expect(key.code).toBe(0)
    expect(onlyJson(key.stdout)).toEqual(expect.objectContaining({ key: expect.stringMatching(/^phx_[0-9A-Za-z]{40,}$/), label: 'ci', scopes: ['*'], email: 'admin@localhost' }))
    const migrate = await runCli(['migrate'], env)
    expect(migrate.code).toBe(0)
    expect(onlyJson(migrate.stdout)).toMatchObject({ postgres: 'ok', event_store: 'embedded', applied: [] })
  })

  test('on the embedded store while the server runs: it joins the server and the server sees the result at once', async () => {
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    const server = await spawnService(env)
    try {
      // a key is made for an existing user only: the user first
      expect((await runCli(['user', 'create', '--email', 'ops@example.com'], env)).code).toBe(0)
      const created = await runCli(['personal-key', 'create', '--label', 'while-running', '--email', 'ops@example.com'], env)
      expect(created.code).toBe(0)
      const { key } = onlyJson(created.stdout)
      const project = await runCli(['project', 'create', '--name', 'Live'], env)
      expect(project.code).toBe(0)
      const r = await fetch(`${server.url}/api/projects/`, { headers: { authorization: `Bearer ${key}` } })
      expect(r.status).toBe(200)
      const names = ((await r.json()) as any).results.map((p: { name: string }) => p.name)
      expect(names).toEqual(['Default project', 'Live'])
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  test('on real Postgres', async () => {
    const env = await freshEnv({ postgres: 'real', clickhouse: 'real' })
    const project = await runCli(['project', 'create', '--name', 'Real'], env)
    expect(project.code).toBe(0)
    expect(onlyJson(project.stdout).id).toBe(1)
    const migrate = await runCli(['migrate'], env)
    expect(onlyJson(migrate.stdout)).toMatchObject({ postgres: 'ok', event_store: 'clickhouse' })
  })

  test('bad usage prints help on stderr, nothing on stdout, and exits 64', async () => {
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    const r = await runCli(['project', 'create'], env)
    expect(r.code).toBe(64)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('--name')
    const unknown = await runCli(['frobnicate'], env)
    expect(unknown.code).toBe(64)
    expect(unknown.stderr).toContain('usage: npm run cli')
  })

  test('a bad environment names the variable', async () => {
    const r = await runCli(['migrate'], { DATA_DIR: '/tmp/x', FLUSH_INTERVAL_MS: 'soon' })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('FLUSH_INTERVAL_MS: got "soon", expected an integer')
  })
})

describe('cli usage', () => {
  test('--help exits 0; an unknown option or a bad --organization is one clear line, exit 64', async () => {
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    const help = await runCli(['--help'], env)
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('usage: npm run cli')
    const unknown = await runCli(['project', 'create', '--nmae', 'x'], env)
    expect(unknown.code).toBe(64)
    expect(unknown.stderr.trim().split('\n')).toEqual([expect.stringContaining("Unknown option '--nmae'")])
    expect(unknown.stdout).toBe('')
    const notUuid = await runCli(['project', 'create', '--name', 'x', '--organization', 'acme'], env)
    expect(notUuid.code).toBe(64)
    expect(notUuid.stderr.trim()).toBe('--organization must be an organization id (a UUID), not "acme"')
    const missing = await runCli(['project', 'create', '--name', 'x', '--organization', '00000000-0000-4000-8000-000000000000'], env)
    expect(missing.code).toBe(64)
    expect(missing.stderr.trim()).toBe('no organization has the id 00000000-0000-4000-8000-000000000000')
  })
})
