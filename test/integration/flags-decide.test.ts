// /decide and /flags over HTTP: every version's exact shape (the reference's worked examples), overrides
// against stored persons and groups, group flags, payloads, encodings, errors, rate limiting, continuity.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { createProject } from '../../src/projects/repository'
import {
  createFlag,
  decide,
  decideRequest,
  flagsChanged,
  insertFlag,
  insertGroup,
  insertGroupType,
  insertPerson,
  THREE_VARIANTS,
} from '../helpers/flags'
import { BASE, json, PERSONAL_KEY, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'
import { EXPECTED_CAPABILITIES } from '../helpers/capabilities'

const CONFIG = {
  config: { enable_collect_everything: true },
  editorParams: {},
  toolbarParams: {},
  isAuthenticated: false,
  ...EXPECTED_CAPABILITIES,
}
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)

async function newProject(stack: Stack, name: string): Promise<{ id: number; token: string }> {
  const p = await createProject(stack.services.db.sql, { name })
  stack.services.tokens.add(p.api_token, p.id)
  return { id: p.id, token: p.api_token }
}

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`/decide on ${postgres} Postgres`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
      // PostHog's documented worked example: a legacy 50% flag, a default flag, a 50/25/25 multivariate.
      await insertFlag(stack.services.db.sql, { key: 'beta-feature', filters: {}, rolloutPercentage: 50 })
      await createFlag(stack, { key: 'default-flag', filters: { groups: [{ properties: [], rollout_percentage: null }] } })
      await createFlag(stack, {
        key: 'multivariate-flag',
        filters: { groups: [{ properties: [], rollout_percentage: null }], multivariate: THREE_VARIANTS, payloads: { 'first-variant': { color: 'blue' } } },
      })
      await flagsChanged(stack)
    })
    afterAll(() => stack?.close())

    test('v1, v2, v3 for example_id: the worked example, exactly', async () => {
      const v1 = await decide(stack, null, { distinct_id: 'example_id' })
      expect({ ...v1, featureFlags: [...v1.featureFlags].sort() }).toEqual({
        ...CONFIG,
        featureFlags: ['beta-feature', 'default-flag', 'multivariate-flag'],
        requestId: UUID,
      })
      expect(await decide(stack, 1, { distinct_id: 'example_id' })).toMatchObject({ featureFlags: expect.any(Array) })
      expect(await decide(stack, 2, { distinct_id: 'example_id' })).toEqual({
        ...CONFIG,
        featureFlags: { 'beta-feature': true, 'default-flag': true, 'multivariate-flag': 'first-variant' },
        requestId: UUID,
      })
      expect(await decide(stack, 3, { distinct_id: 'example_id' })).toEqual({
        ...CONFIG,
        featureFlags: { 'beta-feature': true, 'default-flag': true, 'multivariate-flag': 'first-variant' },
        errorsWhileComputingFlags: false,
        errorComputingFlags: false,
        featureFlagPayloads: { 'multivariate-flag': { color: 'blue' } },
        requestId: UUID,
      })
    })

    test('v2 leaves false flags out, v3 keeps them; multivariate variants differ by user', async () => {
      // beta-feature.another_id hashes to 0.9657 (> 50%); multivariate-flag.other_idvariant to 0.9412 (third)
      expect((await decide(stack, 2, { distinct_id: 'another_id' })).featureFlags).toEqual({ 'default-flag': true, 'multivariate-flag': 'first-variant' })
      const v3 = await decide(stack, 3, { distinct_id: 'another_id' })
      expect(v3.featureFlags).toEqual({ 'beta-feature': false, 'default-flag': true, 'multivariate-flag': 'first-variant' })
      expect((await decide(stack, 3, { distinct_id: 'other_id' })).featureFlags).toEqual({ 'beta-feature': true, 'default-flag': true, 'multivariate-flag': 'third-variant' })
      expect((await decide(stack, 3, { distinct_id: 'other_id' })).featureFlagPayloads).toEqual({})
      expect(v3.featureFlagPayloads).toEqual({ 'multivariate-flag': { color: 'blue' } })
    })

    test('v4 exactly as PostHog test_feature_flags_v4_json asserts', async () => {
      const p = await newProject(stack, 'v4 example')
      const sql = stack.services.db.sql
      const beta = await insertFlag(sql, { teamId: p.id, key: 'beta-feature', filters: {}, rolloutPercentage: 0 })
      const mv = await insertFlag(sql, {
        teamId: p.id,
        key: 'multivariate-flag',
        version: 42,
        filters: { groups: [{ properties: [], rollout_percentage: null }], multivariate: THREE_VARIANTS, payloads: { 'first-variant': { color: 'blue' } } },
      })
      await flagsChanged(stack, p.id)
      const r = await stack.app.handle(decideRequest('/decide/?v=4', { token: p.token, distinct_id: 'example_id' }))
      expect(r.status).toBe(200)
      expect(await json(r)).toEqual({
        ...CONFIG,
        flags: {
          'beta-feature': {
            key: 'beta-feature',
            enabled: false,
            variant: null,
            reason: { code: 'out_of_rollout_bound', condition_index: 0, description: 'Out of rollout bound' },
            metadata: { id: beta, version: 1, description: null, payload: null },
          },
          'multivariate-flag': {
            key: 'multivariate-flag',
            enabled: true,
            variant: 'first-variant',
            reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
            metadata: { id: mv, version: 42, description: null, payload: { color: 'blue' } },
          },
        },
        errorsWhileComputingFlags: false,
        errorComputingFlags: false,
        requestId: UUID,
      })
      // /flags: the same map, with or without the client config
      const flags = await json(stack.app.handle(decideRequest('/flags/?v=2', { token: p.token, distinct_id: 'example_id' })))
      expect(flags).toEqual({ flags: expect.any(Object), errorsWhileComputingFlags: false, errorComputingFlags: false, requestId: UUID, evaluatedAt: expect.any(Number) })
      expect(flags.flags['multivariate-flag'].variant).toBe('first-variant')
      const withConfig = await json(stack.app.handle(decideRequest('/flags', { token: p.token, distinct_id: 'example_id' })))
      expect(withConfig).toMatchObject({ ...CONFIG, flags: { 'beta-feature': { enabled: false } } })
      const legacy = await json(stack.app.handle(decideRequest('/flags/?v=1&config=true', { token: p.token, distinct_id: 'example_id' })))
      expect(legacy).toMatchObject({
        ...CONFIG,
        featureFlags: { 'beta-feature': false, 'multivariate-flag': 'first-variant' },
        featureFlagPayloads: { 'multivariate-flag': { color: 'blue' } },
        errorsWhileComputingFlags: false,
      })
    })

    test('a bad v: unparseable means 2 (posthog-js 1.19 sent ?v=2&v=1.19.0)', async () => {
      for (const v of ['2&v=1.19.0', 'abc', '1.5']) {
        expect((await decide(stack, v, { distinct_id: 'example_id' })).featureFlags).toEqual({
          'beta-feature': true,
          'default-flag': true,
          'multivariate-flag': 'first-variant',
        })
      }
    })

    test('inactive and deleted flags are left out; flag_keys_to_evaluate; disable_flags', async () => {
      const off = await createFlag(stack, { key: 'switched-off', filters: { groups: [{ rollout_percentage: 100 }] }, active: false })
      const gone = await createFlag(stack, { key: 'gone-flag', filters: { groups: [{ rollout_percentage: 100 }] } })
      await stack.api(`/api/projects/1/feature_flags/${gone.id}/`, { method: 'PATCH', json: { deleted: true } })
      const all = (await decide(stack, 3, { distinct_id: 'example_id' })).featureFlags
      expect(Object.keys(all)).not.toContain('switched-off')
      expect(Object.keys(all)).not.toContain('gone-flag')
      const some = await decide(stack, 3, { distinct_id: 'example_id', flag_keys_to_evaluate: ['default-flag', 'nope'] })
      expect(some.featureFlags).toEqual({ 'default-flag': true })
      const disabled = await decide(stack, 3, { distinct_id: 'example_id', disable_flags: true })
      expect(disabled).toMatchObject({ featureFlags: {}, featureFlagPayloads: {}, errorsWhileComputingFlags: false })
      await stack.api(`/api/projects/1/feature_flags/${off.id}/`, { method: 'PATCH', json: { active: true } })
      // the writer's own /decide sees the change at once
      expect((await decide(stack, 3, { distinct_id: 'example_id' })).featureFlags['switched-off']).toBe(true)
      await stack.api(`/api/projects/1/feature_flags/${off.id}/`, { method: 'PATCH', json: { deleted: true } })
    })

    test('person properties: overrides win over stored ones; stored ones are read only when needed', async () => {
      const p = await newProject(stack, 'persons')
      const sql = stack.services.db.sql
      await insertPerson(sql, ['stored-user', 'stored-alias'], { email: 'tim@posthog.com', plan: 'pro' }, p.id)
      await createFlag(
        stack,
        { key: 'posthog-staff', filters: { groups: [{ properties: [{ key: 'email', value: 'posthog.com', operator: 'icontains', type: 'person' }], rollout_percentage: null }] } },
        String(p.id),
      )
      await createFlag(
        stack,
        { key: 'not-on-free', filters: { groups: [{ properties: [{ key: 'plan', value: ['free'], operator: 'is_not', type: 'person' }] }] } },
        String(p.id),
      )
      const ask = async (body: Record<string, unknown>) =>
        (await json(stack.app.handle(decideRequest('/decide/?v=3', { token: p.token, ...body })))) as { featureFlags: Record<string, unknown>; errorsWhileComputingFlags: boolean }
      const loads = () => stack.services.metrics.registry.getSingleMetricAsString('decide_stored_properties_loads_total')
      expect((await ask({ distinct_id: 'stored-user' })).featureFlags).toEqual({ 'posthog-staff': true, 'not-on-free': true })
      expect((await ask({ distinct_id: 'stored-alias' })).featureFlags).toEqual({ 'posthog-staff': true, 'not-on-free': true })
      // an override wins over the stored value
      expect((await ask({ distinct_id: 'stored-user', person_properties: { email: 'tim@example.com' } })).featureFlags['posthog-staff']).toBe(false)
      expect((await ask({ distinct_id: 'stored-user', person_properties: { plan: 'free' } })).featureFlags['not-on-free']).toBe(false)
      // an unknown person: only the pure is_not condition matches
      expect((await ask({ distinct_id: 'nobody' })).featureFlags).toEqual({ 'posthog-staff': false, 'not-on-free': true })
      // everything overridden: no query at all
      const before = await loads()
      const full = await ask({ distinct_id: 'nobody', person_properties: { email: 'a@posthog.com', plan: 'pro' } })
      expect(full).toMatchObject({ featureFlags: { 'posthog-staff': true, 'not-on-free': true }, errorsWhileComputingFlags: false })
      expect(await loads()).toBe(before)
    })

    test('group flags: stored group properties, overrides, no group in the request', async () => {
      const p = await newProject(stack, 'groups')
      const sql = stack.services.db.sql
      const flag = await createFlag(
        stack,
        {
          key: 'group-flag',
          filters: {
            aggregation_group_type_index: 0,
            groups: [{ properties: [{ key: 'plan', value: 'enterprise', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }],
          },
        },
        String(p.id),
      )
      // the group type appears after the cache loaded: a request naming it reloads the mapping
      await insertGroupType(sql, 'company', 0, p.id)
      await insertGroup(sql, 0, 'acme', { plan: 'enterprise' }, p.id)
      await insertGroup(sql, 0, 'tiny', { plan: 'free' }, p.id)
      const ask = async (body: Record<string, unknown>) =>
        (await json(stack.app.handle(decideRequest('/decide/?v=4', { token: p.token, distinct_id: 'someone', ...body })))).flags['group-flag']
      expect(await ask({ groups: { company: 'acme' } })).toMatchObject({ enabled: true, reason: { code: 'condition_match' }, metadata: { id: flag.id } })
      expect(await ask({ groups: { company: 'tiny' } })).toMatchObject({ enabled: false, reason: { code: 'no_condition_match', condition_index: 0 } })
      expect(await ask({ groups: { company: 'tiny' }, group_properties: { company: { plan: 'enterprise' } } })).toMatchObject({ enabled: true })
      expect(await ask({ groups: { company: 'acme' }, group_properties: { company: { plan: 'free' } } })).toMatchObject({ enabled: false })
      expect(await ask({ groups: { company: 'unknown-co' } })).toMatchObject({ enabled: false, reason: { code: 'no_condition_match' } })
      expect(await ask({})).toEqual({
        key: 'group-flag',
        enabled: false,
        variant: null,
        reason: { code: 'no_group_type', condition_index: null, description: 'No group type' },
        metadata: { id: flag.id, version: 1, description: null, payload: null },
      })
    })

    test('payloads: as stored; v3 only truthy ones, v4 every matched one', async () => {
      const p = await newProject(stack, 'payloads')
      await createFlag(stack, { key: 'json-string', filters: { groups: [{ rollout_percentage: 100 }], payloads: { true: '{"a": 1}' } } }, String(p.id))
      await createFlag(stack, { key: 'zero', filters: { groups: [{ rollout_percentage: 100 }], payloads: { true: 0 } } }, String(p.id))
      await createFlag(stack, { key: 'unmatched', filters: { groups: [{ rollout_percentage: 0 }], payloads: { true: '"no"' } } }, String(p.id))
      const v3 = await json(stack.app.handle(decideRequest('/decide/?v=3', { token: p.token, distinct_id: 'u' })))
      expect(v3.featureFlagPayloads).toEqual({ 'json-string': '{"a": 1}' })
      const v4 = await json(stack.app.handle(decideRequest('/decide/?v=4', { token: p.token, distinct_id: 'u' })))
      expect(v4.flags['json-string'].metadata.payload).toBe('{"a": 1}')
      expect(v4.flags.zero.metadata.payload).toBe(0)
      expect(v4.flags.unmatched.metadata.payload).toBeNull()
    })

    test('bodies as every client sends them: form data=, base64, gzip, lz64; GET and OPTIONS', async () => {
      const body = JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'example_id' })
      const b64 = Buffer.from(body).toString('base64')
      const requests = [
        decideRequest('/decide/?v=2', `data=${encodeURIComponent(b64)}`, { 'content-type': 'application/x-www-form-urlencoded' }),
        decideRequest('/decide/?v=2', b64, { 'content-type': 'text/plain' }),
        decideRequest('/decide/?v=2', gzipSync(body), { 'content-type': 'application/json', 'content-encoding': 'gzip' }),
        decideRequest('/decide/?v=2&compression=gzip-js', gzipSync(body), { 'content-type': 'text/plain' }),
        decideRequest('/decide/?v=2&compression=lz64', LZString.compressToBase64(body), { 'content-type': 'text/plain' }),
        decideRequest('/decide?v=2', `data=${encodeURIComponent(LZString.compressToBase64(body))}&compression=lz64`, { 'content-type': 'application/x-www-form-urlencoded' }),
        decideRequest('/decide/?v=2', `api_key=${PROJECT_KEY}&data=${encodeURIComponent(Buffer.from(JSON.stringify({ distinct_id: 'example_id' })).toString('base64'))}`, {
          'content-type': 'application/x-www-form-urlencoded',
        }),
      ]
      for (const request of requests) {
        const r = await stack.app.handle(request)
        expect(r.status).toBe(200)
        expect((await json(r)).featureFlags).toEqual({ 'beta-feature': true, 'default-flag': true, 'multivariate-flag': 'first-variant' })
      }
      const get = await stack.app.handle(new Request(`${BASE}/decide/`, { headers: { origin: 'https://app.example' } }))
      expect(get.status).toBe(200)
      expect(get.headers.get('access-control-allow-origin')).toBe('https://app.example')
      expect(await json(get)).toEqual({
        config: { enable_collect_everything: true },
        editorParams: {},
        toolbarParams: {},
        isAuthenticated: false,
        supportedCompression: ['gzip', 'gzip-js', 'lz64'],
        sessionRecording: false,
        featureFlags: {},
      })
      const options = await stack.app.handle(new Request(`${BASE}/decide/`, { method: 'OPTIONS', headers: { origin: 'https://app.example' } }))
      expect(options.status).toBe(200)
      expect(await json(options)).toEqual({ status: 1 })
      expect(options.headers.get('access-control-allow-methods')).toContain('POST')
    })

    test('errors: missing distinct_id, no token, unknown token, personal keys, malformed bodies', async () => {
      const call = async (body: unknown, path = '/decide/?v=3') => {
        const r = await stack.app.handle(decideRequest(path, body, { 'content-type': 'application/json', origin: 'https://x.example' }))
        expect(r.headers.get('access-control-allow-origin')).toBe('https://x.example')
        return { status: r.status, body: await json(r) }
      }
      expect(await call({ api_key: PROJECT_KEY })).toEqual({
        status: 400,
        body: { type: 'validation_error', code: 'missing_distinct_id', detail: 'Decide requires a distinct_id.', attr: null },
      })
      expect(await call({ distinct_id: 'x' })).toMatchObject({ status: 401, body: { type: 'authentication_error', code: 'no_api_key', attr: null } })
      expect(await call({ api_key: 'phc_no_such_project', distinct_id: 'x' })).toEqual({
        status: 401,
        body: {
          type: 'authentication_error',
          code: 'invalid_api_key',
          detail: 'Project API key invalid. You can find your project API key in PostHog project settings.',
          attr: null,
        },
      })
      expect(await call({ api_key: PERSONAL_KEY, distinct_id: 'x' })).toMatchObject({ status: 400, body: { code: 'invalid_project', attr: 'project_id' } })
      const personal = await call({ api_key: PERSONAL_KEY, project_id: 1, distinct_id: 'example_id' })
      expect(personal).toMatchObject({ status: 200, body: { featureFlags: { 'default-flag': true } } })
      expect(await call({ api_key: 'phx_not_a_real_key', project_id: 1, distinct_id: 'x' })).toMatchObject({ status: 401, body: { code: 'invalid_personal_api_key' } })
      expect(await call('{"api_key": ')).toMatchObject({ status: 400, body: { type: 'validation_error', code: 'malformed_data' } })
      expect(await call({ token: PROJECT_KEY }, '/flags/?v=2')).toMatchObject({ status: 400, body: { code: 'missing_distinct_id' } })
    })

    test('distinct ids that are numbers are hashed as their text', async () => {
      const asText = await decide(stack, 3, { distinct_id: '12345' })
      const asNumber = await decide(stack, 3, { distinct_id: 12345 })
      expect(asNumber.featureFlags).toEqual(asText.featureFlags)
    })

    test('experience continuity: the anonymous id keeps the rollout and variant after identify', async () => {
      const p = await newProject(stack, 'continuity')
      const sql = stack.services.db.sql
      await createFlag(stack, { key: 'beta-feature', ensure_experience_continuity: true, filters: { groups: [{ properties: [], rollout_percentage: 30 }] } }, String(p.id))
      await createFlag(
        stack,
        { key: 'multivariate-flag', ensure_experience_continuity: true, filters: { groups: [{ properties: [], rollout_percentage: null }], multivariate: THREE_VARIANTS } },
        String(p.id),
      )
      const ask = async (body: Record<string, unknown>) => (await json(stack.app.handle(decideRequest('/decide/?v=3', { token: p.token, ...body })))).featureFlags
      // anonymous: example_id is in the 30% and gets first-variant
      expect(await ask({ distinct_id: 'example_id' })).toEqual({ 'beta-feature': true, 'multivariate-flag': 'first-variant' })
      // other_id on its own hashes out of the rollout and into third-variant
      expect(await ask({ distinct_id: 'other_id' })).toEqual({ 'beta-feature': false, 'multivariate-flag': 'third-variant' })
      // identify: both ids are one person; the first decide with the anonymous id records it
      await insertPerson(sql, ['example_id', 'other_id'], {}, p.id)
      expect(await ask({ distinct_id: 'other_id', $anon_distinct_id: 'example_id' })).toEqual({ 'beta-feature': true, 'multivariate-flag': 'first-variant' })
      // later requests without it, and a different anonymous id, keep the first one
      expect(await ask({ distinct_id: 'other_id' })).toEqual({ 'beta-feature': true, 'multivariate-flag': 'first-variant' })
      expect(await ask({ distinct_id: 'other_id', $anon_distinct_id: 'another_id' })).toEqual({ 'beta-feature': true, 'multivariate-flag': 'first-variant' })
      const rows = await sql`select feature_flag_key, hash_key from feature_flag_hash_key_overrides where team_id = ${p.id} order by feature_flag_key`
      expect(rows.map((r) => [r.feature_flag_key, r.hash_key])).toEqual([
        ['beta-feature', 'example_id'],
        ['multivariate-flag', 'example_id'],
      ])
    })
  })
}

describe('/decide rate limit per token', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { RATE_LIMIT_DECIDE_PER_SECOND: 3 })
  })
  afterAll(() => stack?.close())

  test('past the limit: 429 throttled_error with Retry-After', async () => {
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 5; i++) {
      last = await stack.app.handle(decideRequest('/decide/?v=3', { api_key: PROJECT_KEY, distinct_id: `u${i}` }))
      statuses.push(last.status)
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429])
    expect(last!.headers.get('retry-after')).toBe('1')
    expect(await json(last!)).toEqual({
      type: 'throttled_error',
      code: 'throttled',
      detail: 'Request was throttled. Expected available in 1 second.',
      attr: null,
    })
    await Bun.sleep(1100)
    expect((await stack.app.handle(decideRequest('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'later' }))).status).toBe(200)
  })
})
