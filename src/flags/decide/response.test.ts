import { describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { ApiError } from '../../http/errors'
import { compileFlag, type FlagResult } from '../engine'
import {
  anonDistinctId,
  findDistinctId,
  findToken,
  flagKeysToEvaluate,
  overridesOf,
  processBool,
  readBody,
  responseFormat,
} from './request'
import { decideResponse as decideText, flagSection as sectionText, minimalDecide, reasonDescription, type Evaluated } from './response'

// The answer is JSON text: read it back to compare.
const flagSection = (...args: Parameters<typeof sectionText>): any => JSON.parse(`{${sectionText(...args)}}`)
const decideResponse = (...args: Parameters<typeof decideText>): any => JSON.parse(decideText(...args))

const q = (s: string) => new URLSearchParams(s)
const flag = (id: number, key: string, version = 1) =>
  compileFlag({ id, key, active: true, deleted: false, filters: { groups: [{}] }, ensure_experience_continuity: false, version })
const result = (key: string, enabled: boolean, variant: string | null, payload?: unknown, reason: FlagResult['reason'] = enabled ? 'condition_match' : 'out_of_rollout_bound'): FlagResult => ({
  key,
  enabled,
  variant,
  reason,
  conditionIndex: 0,
  payload,
})

// PostHog's documented worked example for distinct_id example_id, plus a false flag.
const evaluated: Evaluated = {
  flags: [flag(1, 'beta-feature'), flag(2, 'default-flag'), flag(3, 'multivariate-flag', 42), flag(4, 'off-flag')],
  results: [
    result('beta-feature', true, null),
    result('default-flag', true, null, ''),
    result('multivariate-flag', true, 'first-variant', { color: 'blue' }),
    result('off-flag', false, null),
  ],
  errors: false,
}

describe('response shapes by version', () => {
  test('v1: the enabled keys', () => {
    expect(flagSection(responseFormat('decide', q('')), evaluated)).toEqual({ featureFlags: ['beta-feature', 'default-flag', 'multivariate-flag'] })
  })

  test('v2: enabled flags only, variants as values', () => {
    expect(flagSection(responseFormat('decide', q('v=2')), evaluated)).toEqual({
      featureFlags: { 'beta-feature': true, 'default-flag': true, 'multivariate-flag': 'first-variant' },
    })
  })

  test('v3: all values, truthy payloads, both error flags', () => {
    expect(flagSection(responseFormat('decide', q('v=3')), evaluated)).toEqual({
      featureFlags: { 'beta-feature': true, 'default-flag': true, 'multivariate-flag': 'first-variant', 'off-flag': false },
      errorsWhileComputingFlags: false,
      errorComputingFlags: false,
      featureFlagPayloads: { 'multivariate-flag': { color: 'blue' } },
    })
  })

  test('v4: the flags detail map', () => {
    const body = flagSection(responseFormat('decide', q('v=4')), evaluated)
    expect(body.flags['multivariate-flag']).toEqual({
      key: 'multivariate-flag',
      enabled: true,
      variant: 'first-variant',
      reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
      metadata: { id: 3, version: 42, description: null, payload: { color: 'blue' } },
    })
    expect(body.flags['off-flag']).toEqual({
      key: 'off-flag',
      enabled: false,
      variant: null,
      reason: { code: 'out_of_rollout_bound', condition_index: 0, description: 'Out of rollout bound' },
      metadata: { id: 4, version: 1, description: null, payload: null },
    })
    expect(body).toMatchObject({ errorsWhileComputingFlags: false, errorComputingFlags: false })
  })

  test('reason descriptions', () => {
    expect(reasonDescription('condition_match', 2)).toBe('Matched condition set 3')
    expect(reasonDescription('no_condition_match', 0)).toBe('No matching condition set')
    expect(reasonDescription('no_group_type', null)).toBe('No group type')
    expect(reasonDescription('super_condition_value', 0)).toBe('Super condition value')
    expect(reasonDescription('holdout_condition_value', 0)).toBe('Holdout condition value')
  })

  test('/flags: v2 map, legacy shape, config only when asked', () => {
    const v2 = decideResponse(responseFormat('flags', q('v=2')), evaluated, 'rid', 123)
    expect(v2.flags).toBeDefined()
    expect(v2.config).toBeUndefined()
    expect(v2).toMatchObject({ requestId: 'rid', evaluatedAt: 123, errorsWhileComputingFlags: false })
    const both = decideResponse(responseFormat('flags', q('v=2&config=true')), evaluated, 'rid')
    expect(both).toMatchObject({ config: { enable_collect_everything: true }, supportedCompression: ['gzip', 'gzip-js', 'lz64'] })
    const legacy = decideResponse(responseFormat('flags', q('v=1')), evaluated, 'rid')
    expect(legacy).toMatchObject({
      featureFlags: { 'beta-feature': true, 'off-flag': false },
      featureFlagPayloads: { 'multivariate-flag': { color: 'blue' }, 'default-flag': '' },
    })
    expect(legacy.flags).toBeUndefined()
    expect(responseFormat('flags', q(''))).toEqual({ shape: 'flags-v2', config: true })
    expect(responseFormat('flags', q('config=true'))).toEqual({ shape: 'flags-legacy', config: true })
  })

  test('disable_flags empties the flag section; the base config is always there on /decide', () => {
    expect(decideResponse(responseFormat('decide', q('v=1')), 'disabled', 'r')).toMatchObject({ featureFlags: [] })
    expect(decideResponse(responseFormat('decide', q('v=3')), 'disabled', 'r')).toMatchObject({ featureFlags: {}, featureFlagPayloads: {}, errorsWhileComputingFlags: false })
    const v4 = decideResponse(responseFormat('decide', q('v=4')), 'disabled', 'r')
    expect(v4).toMatchObject({
      flags: {},
      config: { enable_collect_everything: true },
      editorParams: {},
      toolbarParams: {},
      isAuthenticated: false,
      sessionRecording: false,
      requestId: 'r',
    })
    expect(v4.evaluatedAt).toBeUndefined()
  })

  test('GET answers the minimal config', () => {
    expect(minimalDecide()).toEqual({
      config: { enable_collect_everything: true },
      editorParams: {},
      toolbarParams: {},
      isAuthenticated: false,
      supportedCompression: ['gzip', 'gzip-js', 'lz64'],
      sessionRecording: false,
      featureFlags: {},
    })
  })
})

describe('reading a decide request', () => {
  test('v: missing is 1, the last value counts, unparseable is 2', () => {
    const shape = (s: string) => responseFormat('decide', q(s)).shape
    expect(shape('')).toBe('decide-v1')
    expect(shape('v=1')).toBe('decide-v1')
    expect(shape('v=2')).toBe('decide-v2')
    expect(shape('v=3')).toBe('decide-v3')
    expect(shape('v=4')).toBe('decide-v4')
    expect(shape('v=7')).toBe('decide-v4')
    expect(shape('v=2&v=1.19.0')).toBe('decide-v2')
    expect(shape('v=abc')).toBe('decide-v2')
    expect(shape('v=0')).toBe('decide-v1')
    expect(shape('v=%203%20')).toBe('decide-v3')
  })

  test('the token, in PostHog order', () => {
    const form = new URLSearchParams('api_key=form_key&token=form_token')
    expect(findToken({ token: 'body' }, form, q(''))).toBe('form_key')
    expect(findToken({ $token: 'a', token: 'b', api_key: 'c' }, null, q(''))).toBe('a')
    expect(findToken({ token: 'b', api_key: 'c' }, null, q(''))).toBe('b')
    expect(findToken({ api_key: 'c' }, null, q('token=q'))).toBe('c')
    expect(findToken({}, null, q('token=q'))).toBe('q')
    expect(findToken({ api_key: '' }, null, q(''))).toBeNull()
  })

  test('distinct_id: required, str() of other types, 200 characters at most', () => {
    expect(findDistinctId({ distinct_id: 'u1' })).toBe('u1')
    expect(findDistinctId({ distinct_id: 12345 })).toBe('12345')
    expect(findDistinctId({ distinct_id: { a: 1 } })).toBe("{'a': 1}")
    expect(findDistinctId({ $distinct_id: 'alias' })).toBe('alias')
    expect(findDistinctId({ distinct_id: 'x'.repeat(300) })).toHaveLength(200)
    for (const body of [{}, { distinct_id: null }, { distinct_id: '' }]) {
      try {
        findDistinctId(body)
        throw new Error('expected an error')
      } catch (e) {
        expect(e).toBeInstanceOf(ApiError)
        expect((e as ApiError).toBody()).toEqual({
          type: 'validation_error',
          code: 'missing_distinct_id',
          detail: 'Decide requires a distinct_id.',
          attr: null,
        })
      }
    }
  })

  test('overrides: distinct_id always, $group_key always, request values win', () => {
    const o = overridesOf(
      { groups: { company: 'acme' }, person_properties: { email: 'a@b.c' }, group_properties: { company: { plan: 'pro' }, other: { x: 1 } } },
      'u1',
    )
    expect(o.personOverrides).toEqual({ distinct_id: 'u1', email: 'a@b.c' })
    expect(o.groupOverrides).toEqual({ company: { $group_key: 'acme', plan: 'pro' } })
    expect(overridesOf({ person_properties: 'nope', groups: [1] }, 'u2')).toEqual({ groups: {}, personOverrides: { distinct_id: 'u2' }, groupOverrides: {} })
  })

  test('other fields', () => {
    expect([...flagKeysToEvaluate({ flag_keys_to_evaluate: ['a', 1, 'b'] })!]).toEqual(['a', 'b'])
    expect(flagKeysToEvaluate({})).toBeNull()
    expect(anonDistinctId({ $anon_distinct_id: 'anon' })).toBe('anon')
    expect(anonDistinctId({})).toBeNull()
    expect([true, 'true', 'yes', '1', 1].map(processBool)).toEqual([true, true, true, true, true])
    expect([false, 'false', '0', 0, null, 'no'].map(processBool)).toEqual([false, false, false, false, false, false])
  })

  test('bodies: JSON, form data= base64, gzip, empty; malformed is malformed_data', () => {
    const raw = (body: string | Uint8Array, extra: { contentType?: string; query?: string } = {}) => ({
      method: 'POST',
      body: typeof body === 'string' ? new TextEncoder().encode(body) : body,
      contentType: extra.contentType ?? null,
      contentEncoding: null,
      query: q(extra.query ?? ''),
    })
    const json = JSON.stringify({ token: 't', distinct_id: 'd' })
    expect(readBody(raw(json), 1e6).data).toEqual({ token: 't', distinct_id: 'd' })
    const form = `data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`
    expect(readBody(raw(form, { contentType: 'application/x-www-form-urlencoded' }), 1e6).data).toEqual({ token: 't', distinct_id: 'd' })
    expect(readBody(raw(gzipSync(json)), 1e6).data).toEqual({ token: 't', distinct_id: 'd' })
    expect(readBody(raw(''), 1e6).data).toEqual({})
    for (const bad of ['{"token": ', '[1,2]']) {
      try {
        readBody(raw(bad), 1e6)
        throw new Error('expected an error')
      } catch (e) {
        expect((e as ApiError).code).toBe('malformed_data')
        expect((e as ApiError).detail).toStartWith('Malformed request data')
      }
    }
  })
})

describe('JSON text', () => {
  test('keys that are special in JavaScript objects keep their place; strings are escaped', () => {
    const odd: Evaluated = {
      flags: [flag(1, '__proto__'), flag(2, '123'), flag(3, 'quote"d')],
      results: [result('__proto__', true, 'v"1'), result('123', true, null, { a: '</script>' }), result('quote"d', false, null)],
      errors: true,
    }
    const text = decideText(responseFormat('decide', q('v=3')), odd, 'r')
    const parsed = JSON.parse(text)
    expect(Object.keys(parsed.featureFlags)).toContain('__proto__')
    expect(Object.getOwnPropertyDescriptor(parsed.featureFlags, '__proto__')?.value).toBe('v"1')
    expect(parsed.featureFlags['quote"d']).toBe(false)
    expect(parsed.featureFlagPayloads['123']).toEqual({ a: '</script>' })
    expect(parsed.errorsWhileComputingFlags).toBe(true)
    expect(text.indexOf('"__proto__"')).toBeLessThan(text.indexOf('"123"'))
  })
})
