// Key management: personal keys listed, created, revoked and rolled; project tokens shown and reset; both seen by a
// second service instance on the same Postgres (its own caches, as another process has) within the stated bound.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app'
import { configWith } from '../../src/config'
import { silentLogger } from '../../src/log'
import { createMetrics } from '../../src/ops/metrics'
import { ensureUser } from '../../src/projects/repository'
import { startServices, type Services } from '../../src/services'
import { BASE, freshEnv, json, PERSONAL_KEY, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

function call(app: { handle(r: Request): Promise<Response> }, path: string, key: string, init: RequestInit & { json?: unknown } = {}) {
  const headers = new Headers(init.headers)
  headers.set('authorization', `Bearer ${key}`)
  let body = init.body
  if (init.json !== undefined) {
    body = JSON.stringify(init.json)
    headers.set('content-type', 'application/json')
  }
  return app.handle(new Request(`${BASE}${path}`, { ...init, headers, body }))
}

function capture(app: { handle(r: Request): Promise<Response> }, token: string) {
  return app.handle(
    new Request(`${BASE}/capture/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: token, event: 'e', distinct_id: 'd' }),
    }),
  )
}

function decide(app: { handle(r: Request): Promise<Response> }, token: string) {
  return app.handle(
    new Request(`${BASE}/decide/?v=3`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, distinct_id: 'd' }),
    }),
  )
}

async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const until = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > until) return false
    await Bun.sleep(20)
  }
}

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`personal API keys on ${postgres} Postgres`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(() => stack?.close())

    test('create → 201 with the value once; list newest first, masked; get by id and @current', async () => {
      const created = await stack.api('/api/personal_api_keys/', { method: 'POST', json: { label: 'ci', scopes: ['*'] } })
      expect(created.status).toBe(201)
      const key = await json(created)
      expect(key.value).toMatch(/^phx_[0-9A-Za-z]{40,}$/)
      expect(key).toMatchObject({ label: 'ci', scopes: ['*'], last_used_at: null, last_rolled_at: null })
      expect(key.mask_value).toBe(`phx_...${key.value.slice(-4)}`)
      const list = await json(stack.api('/api/personal_api_keys'))
      expect(Array.isArray(list)).toBe(true)
      expect(list[0].id).toBe(key.id)
      expect(list.every((k: { value: unknown }) => k.value === null)).toBe(true)
      expect(list.map((k: { label: string }) => k.label)).toContain('bootstrap')
      const one = await json(stack.api(`/api/personal_api_keys/${key.id}/`))
      expect(one).toMatchObject({ id: key.id, value: null, mask_value: key.mask_value })
      const current = await json(call(stack.app, '/api/personal_api_keys/@current/', key.value))
      expect(current.id).toBe(key.id)
      // stored only as a sha256 hash
      const [row] = await stack.services.db.sql`select secure_value from personal_api_keys where id = ${key.id}`
      expect(row.secure_value).toMatch(/^sha256\$[0-9a-f]{64}$/)
    })

    test('last_used_at is written on use, and not again within the hour', async () => {
      const k = await json(stack.api('/api/personal_api_keys/', { method: 'POST', json: { label: 'used', scopes: ['*'] } }))
      expect((await call(stack.app, '/api/projects/', k.value)).status).toBe(200)
      let first: string | null = null
      for (let i = 0; i < 100 && first === null; i++) {
        first = (await json(stack.api(`/api/personal_api_keys/${k.id}/`))).last_used_at
        if (first === null) await Bun.sleep(20)
      }
      expect(first).not.toBeNull()
      for (let i = 0; i < 5; i++) expect((await call(stack.app, '/api/projects/', k.value)).status).toBe(200)
      await Bun.sleep(50)
      expect((await json(stack.api(`/api/personal_api_keys/${k.id}/`))).last_used_at).toBe(first)
    })

    test('bad labels and scopes get PostHog’s validation errors', async () => {
      const cases: [unknown, string, string][] = [
        [{ label: '', scopes: ['*'] }, 'blank', 'label'],
        [{ label: 'x'.repeat(41), scopes: ['*'] }, 'max_length', 'label'],
        [{ label: 'ok' }, 'required', 'scopes'],
        [{ label: 'ok', scopes: [] }, 'invalid_input', 'scopes'],
        [{ label: 'ok', scopes: ['feature_flag:destroy'] }, 'invalid_input', 'scopes'],
      ]
      for (const [body, code, attr] of cases) {
        const r = await stack.api('/api/personal_api_keys/', { method: 'POST', json: body })
        expect(r.status).toBe(400)
        expect(await json(r)).toMatchObject({ type: 'validation_error', code, attr })
      }
      const ok = await stack.api('/api/personal_api_keys/', { method: 'POST', json: { label: 'flags', scopes: ['feature_flag:read'] } })
      expect(ok.status).toBe(201)
    })

    test('another user’s key is 404 to get, revoke and roll', async () => {
      const other = await ensureUser(stack.services.db.sql, { email: `other-${crypto.randomUUID()}@example.com` })
      const [theirs] = await stack.services.db.sql`
        insert into personal_api_keys (user_id, label, secure_value, mask_value)
        values (${other.id}, 'theirs', ${`sha256$${'0'.repeat(63)}${postgres === 'real' ? 1 : 2}`}, 'phx_...0000') returning id`
      expect((await stack.api(`/api/personal_api_keys/${theirs.id}/`)).status).toBe(404)
      expect((await stack.api(`/api/personal_api_keys/${theirs.id}/`, { method: 'DELETE' })).status).toBe(404)
      expect((await stack.api(`/api/personal_api_keys/${theirs.id}/roll/`, { method: 'POST' })).status).toBe(404)
      expect((await stack.api('/api/personal_api_keys/not-a-uuid/')).status).toBe(404)
      const list = await json(stack.api('/api/personal_api_keys/'))
      expect(list.map((k: { id: string }) => k.id)).not.toContain(theirs.id)
    })

    test('revoke → 204 and the key is refused from the next request; roll keeps the id and refuses the old value', async () => {
      const a = await json(stack.api('/api/personal_api_keys/', { method: 'POST', json: { label: 'to revoke', scopes: ['*'] } }))
      expect((await call(stack.app, '/api/projects/', a.value)).status).toBe(200)
      const del = await stack.api(`/api/personal_api_keys/${a.id}/`, { method: 'DELETE' })
      expect(del.status).toBe(204)
      const refused = await call(stack.app, '/api/projects/', a.value)
      expect(refused.status).toBe(401)
      expect((await json(refused)).code).toBe('invalid_personal_api_key')

      const b = await json(stack.api('/api/personal_api_keys/', { method: 'POST', json: { label: 'to roll', scopes: ['*'] } }))
      expect((await call(stack.app, '/api/projects/', b.value)).status).toBe(200)
      const rolled = await stack.api(`/api/personal_api_keys/${b.id}/roll/`, { method: 'POST' })
      expect(rolled.status).toBe(200)
      const r = await json(rolled)
      expect(r.id).toBe(b.id)
      expect(r.value).toMatch(/^phx_/)
      expect(r.value).not.toBe(b.value)
      expect(r.last_rolled_at).not.toBeNull()
      expect((await call(stack.app, '/api/projects/', b.value)).status).toBe(401)
      expect((await call(stack.app, '/api/projects/', r.value)).status).toBe(200)
    })

    test('project token in clear; reset → new phc_ token, the old one refused at once on capture and /decide', async () => {
      const projects = await json(stack.api('/api/projects/'))
      expect(projects.results[0].api_token).toBe(PROJECT_KEY)
      expect((await json(stack.api('/api/projects/@current/'))).api_token).toBe(PROJECT_KEY)
      expect((await capture(stack.app, PROJECT_KEY)).status).toBe(200)
      const reset = await stack.api('/api/projects/1/reset_token/', { method: 'PATCH' })
      expect(reset.status).toBe(200)
      const project = await json(reset)
      expect(project.api_token).toMatch(/^phc_/)
      expect(project.api_token).not.toBe(PROJECT_KEY)
      const old = await capture(stack.app, PROJECT_KEY)
      expect(old.status).toBe(401)
      expect((await json(old)).code).toBe('invalid_api_key')
      expect((await decide(stack.app, PROJECT_KEY)).status).toBe(401)
      expect((await capture(stack.app, project.api_token)).status).toBe(200)
      expect((await decide(stack.app, project.api_token)).status).toBe(200)
      expect((await json(stack.api('/api/projects/1/'))).api_token).toBe(project.api_token)
    })
  })
}

describe('a second service instance on the same Postgres (another process’s caches)', () => {
  let first: Stack
  let second: Services
  let secondApp: ReturnType<typeof createApp>
  beforeAll(async () => {
    first = await startStack({ postgres: 'real', clickhouse: 'embedded' })
    const env = { ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), DATABASE_URL: first.config.DATABASE_URL! }
    second = await startServices(configWith(env), silentLogger, { metrics: createMetrics() })
    secondApp = createApp(second)
  })
  afterAll(async () => {
    await second?.close()
    await first?.close()
  })

  test('a revoked key is refused by the other instance from its next request; a rolled one too', async () => {
    const k = await json(first.api('/api/personal_api_keys/', { method: 'POST', json: { label: 'shared', scopes: ['*'] } }))
    expect((await call(secondApp, '/api/projects/', k.value)).status).toBe(200)
    expect((await first.api(`/api/personal_api_keys/${k.id}/`, { method: 'DELETE' })).status).toBe(204)
    expect((await call(secondApp, '/api/projects/', k.value)).status).toBe(401)

    const r = await json(first.api('/api/personal_api_keys/', { method: 'POST', json: { label: 'roll', scopes: ['*'] } }))
    expect((await call(secondApp, '/api/projects/', r.value)).status).toBe(200)
    const rolled = await json(first.api(`/api/personal_api_keys/${r.id}/roll/`, { method: 'POST' }))
    expect((await call(secondApp, '/api/projects/', r.value)).status).toBe(401)
    expect((await call(secondApp, '/api/projects/', rolled.value)).status).toBe(200)
  })

  test('a reset token is refused by the other instance within KEY_CHANGE_CHECK_MS (NOTIFY usually sooner)', async () => {
    expect((await capture(secondApp, PROJECT_KEY)).status).toBe(200)
    const project = await json(first.api('/api/projects/1/reset_token/', { method: 'PATCH' }))
    const startedAt = Date.now()
    expect(await within(second.config.KEY_CHANGE_CHECK_MS + 500, async () => (await capture(secondApp, PROJECT_KEY)).status === 401)).toBe(true)
    expect(Date.now() - startedAt).toBeLessThanOrEqual(second.config.KEY_CHANGE_CHECK_MS + 500)
    expect((await decide(secondApp, PROJECT_KEY)).status).toBe(401)
    expect((await capture(secondApp, project.api_token)).status).toBe(200)
  })

  test('the second boot did not re-create the INIT keys (the store already had an organization)', async () => {
    const [{ count }] = await first.services.db.sql`select count(*)::int as count from organizations`
    expect(count).toBe(1)
    const [{ projects }] = await first.services.db.sql`select count(*)::int as projects from projects`
    expect(projects).toBe(1)
    expect(PERSONAL_KEY).toMatch(/^phx_/)
  })
})
