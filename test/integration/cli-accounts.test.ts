// The CLI places users like an admin would, with the API's own validation: `organization create`, `user create`, and
// `personal-key create --email` for an existing user only (an unknown email is refused, never made an owner); label
// length, scopes and the 10-key cap hold for the CLI as for the API.
import { describe, expect, test } from 'bun:test'
import { freshEnv } from '../helpers/stack'
import { runCli, spawnService } from '../helpers/spawn-service'

const out = (stdout: string) => JSON.parse(stdout.trim().split('\n').pop()!)

describe('cli: organizations, users and their keys (real Postgres, no server)', () => {
  test('organization create, user create, a key for that user reaches only its organization', async () => {
    const env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
    const service = await spawnService(env) // bootstraps the default organization, project 1 and the admin
    try {
      const unknown = await runCli(['personal-key', 'create', '--label', 'x', '--email', 'nobody@example.com'], env)
      expect(unknown.code).toBe(64)
      expect(unknown.stderr).toContain('No user has the email nobody@example.com')

      const org = await runCli(['organization', 'create', '--name', 'Acme'], env)
      expect(org.code).toBe(0)
      const { id: orgId } = out(org.stdout)
      expect(orgId).toMatch(/^[0-9a-f-]{36}$/)
      const project = out((await runCli(['project', 'create', '--name', 'Acme web', '--organization', orgId], env)).stdout)
      const user = await runCli(['user', 'create', '--email', 'dev@acme.example', '--organization', orgId], env)
      expect(user.code).toBe(0)
      expect(out(user.stdout)).toEqual({ id: expect.any(Number), email: 'dev@acme.example', organization: orgId })
      expect((await runCli(['user', 'create', '--email', 'dev@acme.example'], env)).code).toBe(64)
      expect((await runCli(['user', 'create', '--email', 'x@y.z', '--organization', crypto.randomUUID()], env)).code).toBe(64)

      const key = out((await runCli(['personal-key', 'create', '--label', 'dev', '--email', 'dev@acme.example'], env)).stdout)
      expect(key.key).toMatch(/^phx_/)
      const projects = (await (await fetch(`${service.url}/api/projects/`, { headers: { authorization: `Bearer ${key.key}` } })).json()) as any
      // a member of Acme only: the default organization's project 1 is not theirs
      expect(projects.results.map((p: { id: number }) => p.id)).toEqual([project.id])
      const current = await fetch(`${service.url}/api/projects/@current/`, { headers: { authorization: `Bearer ${key.key}` } })
      expect(current.status).toBe(200)

      // one validation with the API: a label over 40 characters, a bad scope, the eleventh key
      const long = await runCli(['personal-key', 'create', '--label', 'l'.repeat(41), '--email', 'dev@acme.example'], env)
      expect(long.code).toBe(64)
      expect(long.stderr).toContain('no more than 40 characters')
      expect((await runCli(['personal-key', 'create', '--label', 's', '--scopes', 'nonsense:read', '--email', 'dev@acme.example'], env)).code).toBe(64)
      const scoped = out((await runCli(['personal-key', 'create', '--label', 'reader', '--scopes', 'feature_flag:read', '--email', 'dev@acme.example'], env)).stdout)
      expect(scoped.scopes).toEqual(['feature_flag:read'])
      for (let i = 3; i <= 10; i++) expect((await runCli(['personal-key', 'create', '--label', `k${i}`, '--email', 'dev@acme.example'], env)).code).toBe(0)
      const eleventh = await runCli(['personal-key', 'create', '--label', 'k11', '--email', 'dev@acme.example'], env)
      expect(eleventh.code).toBe(64)
      expect(eleventh.stderr).toContain('You can only have 10 personal API keys')
    } finally {
      expect(await service.stop()).toBe(0)
    }
  })
})
