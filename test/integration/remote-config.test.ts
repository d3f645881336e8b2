// GET /array/:token/config and /array/:token/config.js, the remote config current posthog-js loads before it
// asks for flags: what it says (gzip-js offered, events to /i/v0/e/, flags on, the rest off), in which form,
// with which headers, and what an unknown token gets.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { BASE, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'
import { EXPECTED_CAPABILITIES } from '../helpers/capabilities'

let stack: Stack
beforeAll(async () => {
  stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' })
})
afterAll(async () => {
  await stack?.close()
})

const get = (path: string, headers: Record<string, string> = {}) => stack.app.handle(new Request(`${BASE}${path}`, { headers }))

/** What the service offers posthog-js, as the remote config must state it. */
const EXPECTED_CONFIG = {
  token: PROJECT_KEY,
  hasFeatureFlags: true,
  ...EXPECTED_CAPABILITIES,
}

/** Runs the script form as a browser would and returns what it registered on `window`. */
function runScript(source: string): Record<string, { config: Record<string, unknown>; siteApps: unknown[] }> {
  const window: { _POSTHOG_REMOTE_CONFIG?: Record<string, { config: Record<string, unknown>; siteApps: unknown[] }> } = {}
  new Function('window', source)(window)
  return window._POSTHOG_REMOTE_CONFIG ?? {}
}

describe('remote config for a known token', () => {
  for (const path of [`/array/${PROJECT_KEY}/config`, `/array/${PROJECT_KEY}/config/`]) {
    test(`GET ${path.replace(PROJECT_KEY, ':token')} answers 200 JSON with the service's capabilities, gzip-js included`, async () => {
      const r = await get(path)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toBe('application/json')
      expect(r.headers.get('cache-control')).toBe('public, max-age=300')
      expect(r.headers.get('access-control-allow-origin')).toBe('*')
      const body = (await r.json()) as typeof EXPECTED_CONFIG
      expect(body).toEqual(EXPECTED_CONFIG)
      // posthog-js gzips only when it sees gzip-js
      expect(body.supportedCompression).toContain('gzip-js')
    })
  }

  for (const path of [`/array/${PROJECT_KEY}/config.js`, `/array/${PROJECT_KEY}/config.js/`]) {
    test(`GET ${path.replace(PROJECT_KEY, ':token')} answers a script that registers the same config under the token`, async () => {
      const r = await get(path)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
      expect(r.headers.get('cache-control')).toBe('public, max-age=300')
      const registered = runScript(await r.text())
      expect(Object.keys(registered)).toEqual([PROJECT_KEY])
      expect(registered[PROJECT_KEY].config).toEqual(EXPECTED_CONFIG)
      expect(registered[PROJECT_KEY].siteApps).toEqual([])
    })
  }

  test('the script keeps configs registered before it (several posthog instances on one page)', async () => {
    const source = await (await get(`/array/${PROJECT_KEY}/config.js`)).text()
    const window = { _POSTHOG_REMOTE_CONFIG: { phc_other: { config: { token: 'phc_other' }, siteApps: [] } } }
    new Function('window', source)(window)
    expect(Object.keys(window._POSTHOG_REMOTE_CONFIG).sort()).toEqual(['phc_other', PROJECT_KEY].sort())
  })

  test('the query posthog-js may append is ignored, and the caller origin is mirrored with credentials', async () => {
    const r = await get(`/array/${PROJECT_KEY}/config?ip=0&_=1700000000000&ver=1.449.2`, { origin: 'https://shop.example' })
    expect(r.status).toBe(200)
    expect(r.headers.get('access-control-allow-origin')).toBe('https://shop.example')
    expect(r.headers.get('access-control-allow-credentials')).toBe('true')
    expect(r.headers.get('vary')).toBe('Origin')
    expect(await r.json()).toEqual(EXPECTED_CONFIG)
  })

  test('a token quoted in the script is escaped as a JS string, not spliced in', async () => {
    // no such project: the route must refuse it before it ever reaches the script text
    const r = await get(`/array/${encodeURIComponent('phc_x"];alert(1);//')}/config.js`)
    expect(r.status).toBe(404)
    expect(await r.text()).not.toContain('alert(1)')
  })

  test('a project another process created is served without a restart, even when first asked for right after a miss', async () => {
    // a miss reloads the key snapshot (at most once a second)…
    expect((await get('/array/phc_not_a_project_yet/config')).status).toBe(404)
    // …so a project created within that second is not known yet
    const created = await createProject(stack.services.db.sql, { name: 'remote config project' })
    expect((await get(`/array/${created.api_token}/config`)).status).toBe(404)
    // but that unconfirmed miss is not remembered: once the second is over it is found (it used to be
    // refused for the negative cache's 10 s)
    await Bun.sleep(1_100)
    const r = await get(`/array/${created.api_token}/config`)
    expect(r.status).toBe(200)
    expect(((await r.json()) as { token: string }).token).toBe(created.api_token)
    expect(runScript(await (await get(`/array/${created.api_token}/config.js`)).text())[created.api_token].config.token).toBe(created.api_token)
  })
})

describe('remote config for an unknown token', () => {
  for (const suffix of ['config', 'config/', 'config.js', 'config.js/']) {
    test(`GET /array/:unknown/${suffix} answers 404 not_found with the error shape`, async () => {
      const r = await get(`/array/phc_no_project_has_this_key/${suffix}`)
      expect(r.status).toBe(404)
      expect(r.headers.get('content-type')).toBe('application/json')
      expect(await r.json()).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'No project has this token.', attr: null })
    })
  }

  test('POST is not a remote-config method: 405 with Allow, for a known token too', async () => {
    const r = await stack.app.handle(new Request(`${BASE}/array/${PROJECT_KEY}/config`, { method: 'POST', body: '{}' }))
    expect(r.status).toBe(405)
    expect(r.headers.get('allow')).toBe('GET, HEAD')
    expect(((await r.json()) as { code: string }).code).toBe('method_not_allowed')
  })
})
