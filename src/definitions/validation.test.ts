import { describe, expect, test } from 'bun:test'
import { parsePropertyChanges, parsePropertyListParams, parseSeenTogether } from './property-validation'
import { curate, escapeLike, parseBulkTags, searchTerms, type Curation } from './rules'
import { parseEventChanges, parseEventCreate, parseOrdering } from './validation'

/** The error a parse throws, as {code, attr}. */
function failure(parse: () => unknown): { code: string; attr: string | null; detail: string } | undefined {
  try {
    parse()
  } catch (e) {
    const { code, attr, detail } = e as { code: string; attr: string | null; detail: string }
    return { code, attr, detail }
  }
  return undefined
}

describe('definitions API parameters', () => {
  test('ordering: repeated or comma-joined, - for descending, unknown keys dropped', () => {
    expect(parseOrdering(['-last_seen_at,name', 'bogus', 'created_at::date'])).toEqual([
      { key: 'last_seen_at', descending: true },
      { key: 'name', descending: false },
      { key: 'created_at::date', descending: false },
    ])
    expect(parseOrdering(['; drop table x', '-'])).toEqual([])
  })

  test('search terms split on spaces; LIKE wildcards are escaped', () => {
    expect(searchTerms('  sign  up\0 ')).toEqual(['sign', 'up'])
    expect(searchTerms(undefined)).toEqual([])
    expect(escapeLike('100%_off\\x')).toBe('100\\%\\_off\\\\x')
  })

  test('event PATCH members are checked one by one; read-only ones ignored, unknown ones named', () => {
    expect(parseEventChanges({ name: 'x', tags: [' A ', 'a', 'b'], post_to_chat: true, last_seen_at: '2024-01-01T00:00:00Z', created_at: null, description: 42, verified: true, verified_at: 'ignored', id: 'ignored' })).toEqual({
      changes: { name: 'x', tags: ['a', 'b'], post_to_chat: true, last_seen_at: new Date('2024-01-01T00:00:00Z'), created_at: null, description: '42' },
      curation: { verified: true },
    })
    const attr = (body: unknown) => failure(() => parseEventChanges(body))?.attr
    expect(attr({ owner: 'x' })).toBe('owner')
    expect(attr({ name: '' })).toBe('name')
    expect(attr({ tags: 'x' })).toBe('tags')
    expect(attr({ tags: Array.from({ length: 101 }, (_, i) => `t${i}`) })).toBe('tags')
    expect(attr({ tags: ['x'.repeat(256)] })).toBe('tags')
    expect(attr({ tags: ['a\0b'] })).toBe('tags')
    expect(attr({ tags: ['\ud800'] })).toBe('tags')
    expect(attr({ description: true })).toBe('description')
    expect(attr({ verified: 'yes' })).toBe('verified')
    expect(attr({ hidden: 1 })).toBe('hidden')
    expect(attr({ post_to_chat: 'yes' })).toBe('post_to_chat')
    expect(attr({ last_seen_at: 'soon' })).toBe('last_seen_at')
  })

  test('event POST: name required; the timestamps are not the client’s to set', () => {
    expect(parseEventCreate({ name: 'Signed Up', created_at: '2024-01-01T00:00:00Z', tags: ['Web'] })).toEqual({
      name: 'Signed Up',
      description: '',
      tags: ['web'],
      post_to_chat: false,
      curation: {},
    })
    expect(failure(() => parseEventCreate({}))).toMatchObject({ code: 'required', attr: 'name' })
    expect(failure(() => parseEventCreate({ name: '  ' }))).toMatchObject({ code: 'blank', attr: 'name' })
    expect(failure(() => parseEventCreate('{not json'))).toMatchObject({ code: 'parse_error' })
  })

  test('property list: type, group_type_index and event_names go together', () => {
    expect(parsePropertyListParams({})).toMatchObject({ kind: 'event', groupTypeIndex: null, eventNames: null, names: null, numericalOnly: false, featureFlags: null })
    expect(parsePropertyListParams({ type: 'group', group_type_index: '0' })).toMatchObject({ kind: 'group', groupTypeIndex: 0 })
    expect(parsePropertyListParams({ type: 'session' }).kind).toBe('session')
    expect(failure(() => parsePropertyListParams({ type: 'cohort' }))).toEqual({ code: 'invalid_choice', attr: 'type', detail: '"cohort" is not a valid choice.' })
    expect(failure(() => parsePropertyListParams({ type: 'group' }))).toMatchObject({ attr: 'group_type_index' })
    expect(failure(() => parsePropertyListParams({ type: 'person', group_type_index: '1' }))).toMatchObject({ attr: 'group_type_index' })
    for (const bad of ['-1', '5', '77', 'x']) expect(failure(() => parsePropertyListParams({ type: 'group', group_type_index: bad }))).toMatchObject({ attr: 'group_type_index' })
    expect(failure(() => parsePropertyListParams({ type: 'person', event_names: '["a"]' }))).toMatchObject({ attr: 'event_names' })
  })

  test('property list: names, JSON arrays and booleans', () => {
    expect(parsePropertyListParams({ properties: 'a, b,,c', event_names: '["$pageview", 1]', excluded_properties: '["x"]', is_numerical: 'True', is_feature_flag: 'false', filter_by_event_names: '1', exclude_hidden: 'yes' })).toEqual({
      kind: 'event',
      groupTypeIndex: null,
      names: ['a', 'b', 'c'],
      numericalOnly: true,
      featureFlags: false,
      eventNames: ['$pageview', '1'],
      onlySeenOnEvents: true,
      excluded: ['x'],
      excludeHidden: true,
    })
    expect(parsePropertyListParams({ event_names: '[]', is_numerical: 'false' })).toMatchObject({ eventNames: null, numericalOnly: false })
    expect(failure(() => parsePropertyListParams({ event_names: '{oops' }))).toMatchObject({ attr: 'event_names' })
    expect(failure(() => parsePropertyListParams({ excluded_properties: '{"a":1}' }))).toMatchObject({ attr: 'excluded_properties' })
    expect(failure(() => parsePropertyListParams({ is_numerical: 'maybe' }))).toMatchObject({ attr: 'is_numerical' })
    expect(failure(() => parsePropertyListParams({ properties: Array.from({ length: 1001 }, (_, i) => `p${i}`).join(',') }))).toMatchObject({ attr: 'properties' })
  })

  test('property PATCH: the writable members, checked; read-only ones ignored', () => {
    expect(parsePropertyChanges({ description: ' Price ', tags: ['B', 'a', 'b'], property_type: 'Numeric', hidden: false, name: 'ignored', is_numerical: false, verified_by: null })).toEqual({
      changes: { description: 'Price', tags: ['b', 'a'], property_type: 'Numeric' },
      curation: { hidden: false },
    })
    expect(parsePropertyChanges({ property_type: null }).changes).toEqual({ property_type: null })
    expect(failure(() => parsePropertyChanges({ property_type: 'Integer' }))).toEqual({ code: 'invalid_choice', attr: 'property_type', detail: '"Integer" is not a valid choice.' })
    expect(failure(() => parsePropertyChanges({ property_type: 5 }))).toMatchObject({ attr: 'property_type' })
    expect(failure(() => parsePropertyChanges({ verified: 'true' }))).toMatchObject({ attr: 'verified' })
    expect(failure(() => parsePropertyChanges({ description: ['x'] }))).toMatchObject({ attr: 'description' })
    expect(failure(() => parsePropertyChanges({ tags: 'a,b' }))).toMatchObject({ attr: 'tags' })
    expect(failure(() => parsePropertyChanges({ type: 'person' }))).toMatchObject({ attr: 'type' })
  })

  test('seen_together: both parameters required', () => {
    expect(parseSeenTogether(['a', 'b', 'a'], 'p')).toEqual({ events: ['a', 'b'], property: 'p' })
    expect(failure(() => parseSeenTogether([], 'p'))).toMatchObject({ code: 'required', attr: 'event_names' })
    expect(failure(() => parseSeenTogether(['a'], null))).toMatchObject({ code: 'required', attr: 'property_name' })
  })

  test('bulk tags: ids, action and tags checked; add and remove need tags', () => {
    const id = crypto.randomUUID()
    expect(parseBulkTags({ ids: [id, id, 'x'], action: 'add', tags: [' A', 'b'] })).toEqual({ ids: [id, 'x'], action: 'add', tags: ['a', 'b'] })
    expect(parseBulkTags({ ids: [id], action: 'set', tags: [] }).tags).toEqual([])
    expect(failure(() => parseBulkTags({ action: 'add', tags: ['a'] }))).toMatchObject({ code: 'required', attr: 'ids' })
    expect(failure(() => parseBulkTags({ ids: 'x', action: 'add', tags: ['a'] }))).toMatchObject({ attr: 'ids' })
    expect(failure(() => parseBulkTags({ ids: Array(501).fill(id), action: 'set', tags: [] }))).toMatchObject({ attr: 'ids' })
    expect(failure(() => parseBulkTags({ ids: [id], action: 'toggle', tags: ['a'] }))).toMatchObject({ code: 'invalid_choice', attr: 'action' })
    expect(failure(() => parseBulkTags({ ids: [id], action: 'remove', tags: [] }))).toMatchObject({ attr: 'tags' })
  })
})

describe('verified and hidden', () => {
  const now = new Date('2025-01-02T03:04:05Z')
  const plain: Curation = { verified: false, verified_at: null, verified_by_id: null, hidden: false }
  const verified: Curation = { verified: true, verified_at: new Date('2024-01-01T00:00:00Z'), verified_by_id: 7, hidden: false }

  test('verifying stamps who and when, and unhides', () => {
    expect(curate({ ...plain, hidden: true }, { verified: true }, 3, now, 'A property')).toEqual({ verified: true, verified_at: now, verified_by_id: 3, hidden: false })
  })

  test('verifying again moves nothing; unverifying clears the stamp', () => {
    expect(curate(verified, { verified: true }, 3, now, 'A property')).toEqual(verified)
    expect(curate(verified, { verified: false }, 3, now, 'A property')).toEqual(plain)
  })

  test('hiding unverifies', () => {
    expect(curate(verified, { hidden: true }, 3, now, 'An event')).toEqual({ ...plain, hidden: true })
    expect(curate({ ...plain, hidden: true }, { hidden: false }, 3, now, 'An event')).toEqual(plain)
  })

  test('hidden and verified at once is refused', () => {
    expect(failure(() => curate(plain, { hidden: true, verified: true }, 3, now, 'A property'))).toEqual({
      code: 'invalid_input',
      attr: null,
      detail: 'A property cannot be both hidden and verified',
    })
  })
})

test('curation of a whole row gives back only the curation members', () => {
  const row = { id: 'x', description: 'kept elsewhere', verified: false, verified_at: null, verified_by_id: null, hidden: false }
  expect(Object.keys(curate(row, { verified: true }, 1, new Date(), 'An event')).sort()).toEqual(['hidden', 'verified', 'verified_at', 'verified_by_id'])
  expect(Object.keys(curate(row, {}, 1, new Date(), 'An event')).sort()).toEqual(['hidden', 'verified', 'verified_at', 'verified_by_id'])
})
