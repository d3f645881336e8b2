// The CLI's organization and user commands as an operator runs them (the password on stdin), then signing in with
// what they made through HTTP: a second organization's user sees only its own projects.
import { afterAll, describe, expect, test } from 'bun:test'
import { BASE, freshEnv, json, startStack, type Stack } from '../helpers/stack'
import { ROOT } from '../helpers/spawn-service'
import postgres from 'postgres'

async function cli(args: string[], env: Record<string, string>, stdin = '') {
  const proc = Bun.spawn([process.execPath, 'run', 'src/cli.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdin: new Blob([stdin]),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr, json: () => JSON.parse(stdout.trim().split('\n').pop() ?? 'null') }
}

let stack: Stack | undefined
let second: Stack | undefined
afterAll(async () => {
  await stack?.close()
  await second?.close()
})

describe('cli: organizations and console users', () => {
  test('organization create, user create --password-stdin, set-password; then the user signs in and sees only its organization', async () => {
    const env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
    const org = await cli(['organization', 'create', '--name', 'Second org'], env)
    expect(org.code).toBe(0)
    const { id: organizationId } = org.json()
    expect(organizationId).toMatch(/^[0-9a-f-]{36}$/)
    const project = await cli(['project', 'create', '--name', 'Second project', '--organization', organizationId], env)
    expect(project.code).toBe(0)

    const short = await cli(['user', 'create', '--email', 'ops@example.com', '--password-stdin', '--organization', organizationId], env, 'short\n')
    expect(short.code).toBe(64)
    expect(short.stderr).toContain('at least 8 characters')
    expect(short.stderr).not.toContain('short')

    const made = await cli(['user', 'create', '--email', 'Ops@Example.com', '--password-stdin', '--organization', organizationId], env, 'first password\n')
    expect(made.code).toBe(0)
    expect(made.json()).toEqual({ id: expect.any(Number), email: 'ops@example.com', organization: organizationId })
    const again = await cli(['user', 'create', '--email', 'ops@example.com', '--password-stdin'], env, 'first password\n')
    expect(again.code).toBe(64)
    expect(again.stderr).toContain('already exists')

    const changed = await cli(['user', 'set-password', '--email', 'ops@example.com', '--password-stdin'], env, 'second password\n')
    expect(changed.code).toBe(0)
    expect((await cli(['user', 'set-password', '--email', 'nobody@example.com', '--password-stdin'], env, 'whatever pw\n')).code).toBe(64)
    expect((await cli(['user', 'set-password', '--email', 'ops@example.com'], env)).code).toBe(64)

    stack = await startStack({ postgres: 'real', clickhouse: 'embedded' }, { DATABASE_URL: env.DATABASE_URL })
    const login = (password: string) =>
      stack!.app.handle(new Request(`${BASE}/api/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ops@example.com', password }) }))
    expect((await login('first password')).status).toBe(401)
    const ok = await login('second password')
    expect(ok.status).toBe(200)
    const me = await json(ok)
    expect(me.organization.id).toBe(organizationId)
    expect(me.projects).toEqual([{ id: project.json().id, name: 'Second project', organization: organizationId }])
  })

  test('INIT_ADMIN_* on a store that already has users: the admin is created as an owner and may reset the token', async () => {
    const env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
    expect((await cli(['project', 'create', '--name', 'Existing'], env)).code).toBe(0)
    expect((await cli(['user', 'create', '--email', 'first@example.com', '--password-stdin'], env, 'first password\n')).code).toBe(0)
    second = await startStack(
      { postgres: 'real', clickhouse: 'embedded' },
      { DATABASE_URL: env.DATABASE_URL, INIT_PROJECT_API_KEY: '', INIT_PERSONAL_API_KEY: '', INIT_ADMIN_EMAIL: 'boss@example.com', INIT_ADMIN_PASSWORD: 'boss password' },
    )
    const login = await second.app.handle(
      new Request(`${BASE}/api/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'boss@example.com', password: 'boss password' }) }),
    )
    expect(login.status).toBe(200)
    const me = await json(login)
    expect(me.organization.membership_level).toBe(15)
    const cookies = login.headers.getSetCookie().map((c) => c.split(';')[0])
    const csrf = cookies.find((c) => c.startsWith('phog_csrftoken='))!.split('=')[1]
    const reset = await second.app.handle(
      new Request(`${BASE}/api/projects/${me.projects[0].id}/reset_token/`, { method: 'PATCH', headers: { cookie: cookies.join('; '), 'x-csrftoken': csrf } }),
    )
    expect(reset.status).toBe(200)
  })

  test("the README's order: personal-key create, then user create: the first console user owns the organization, the next is a member", async () => {
    const env: Record<string, string> = { ...(await freshEnv({ postgres: 'real', clickhouse: 'embedded' })), INIT_PROJECT_API_KEY: '', INIT_PERSONAL_API_KEY: '' }
    expect((await cli(['project', 'create', '--name', 'Web'], env)).code).toBe(0)
    expect((await cli(['personal-key', 'create', '--label', 'ci'], env)).code).toBe(0) // the password-less admin@localhost
    expect((await cli(['user', 'create', '--email', 'you@example.com', '--password-stdin'], env, 'a long passphrase\n')).code).toBe(0)
    expect((await cli(['user', 'create', '--email', 'next@example.com', '--password-stdin'], env, 'another passphrase\n')).code).toBe(0)
    const sql = postgres(env.DATABASE_URL!, { max: 1, onnotice: () => {} })
    try {
      const levels = await sql<{ email: string; level: number }[]>`
        select u.email, m.level from organization_members m join users u on u.id = m.user_id order by u.email`
      expect(levels.map((r) => [r.email, r.level])).toEqual([
        // admin@localhost, whose place the first owner took, left the organization
        ['next@example.com', 1],
        ['you@example.com', 15],
      ])
      // the key printed before anyone could sign in now belongs to the owner, who sees it in Settings
      const holders = await sql<{ label: string; email: string }[]>`
        select k.label, u.email from personal_api_keys k join users u on u.id = k.user_id order by k.created_at`
      expect(holders.map((r) => [r.label, r.email])).toEqual([['ci', 'you@example.com']])
    } finally {
      await sql.end()
    }
    // a later key without --email goes to that owner too
    const later = await cli(['personal-key', 'create', '--label', 'later'], env)
    expect(later.code).toBe(0)
    expect(later.json().email).toBe('you@example.com')
  })

  test('an older store whose owner was made before the keys moved: the migration gives admin@localhost\'s keys to the owner', async () => {
    const env: Record<string, string> = { ...(await freshEnv({ postgres: 'real', clickhouse: 'embedded' })), INIT_PROJECT_API_KEY: '', INIT_PERSONAL_API_KEY: '' }
    expect((await cli(['project', 'create', '--name', 'Web'], env)).code).toBe(0)
    expect((await cli(['personal-key', 'create', '--label', 'ci'], env)).code).toBe(0)
    const sql = postgres(env.DATABASE_URL!, { max: 1, onnotice: () => {} })
    try {
      // as an earlier version left it: an owner who can sign in, the keys still admin@localhost's, 0021 not applied
      const [org] = await sql`select id from organizations`
      const [owner] = await sql`insert into users (distinct_id, email, password_hash) values ('old-owner', 'old@example.com', 'argon2-hash') returning id`
      await sql`insert into organization_members (organization_id, user_id, level) values (${org.id}, ${owner.id}, 15)`
      await sql`delete from schema_migrations where version like '0021%'`
      expect((await cli(['migrate'], env)).code).toBe(0)
      const holders = await sql<{ email: string }[]>`select u.email from personal_api_keys k join users u on u.id = k.user_id`
      expect(holders.map((r) => r.email)).toEqual(['old@example.com'])
      const members = await sql<{ email: string }[]>`select u.email from organization_members m join users u on u.id = m.user_id`
      expect(members.map((r) => r.email)).toEqual(['old@example.com'])
    } finally {
      await sql.end()
    }
  })
})
