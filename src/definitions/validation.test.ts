import { describe, expect, test } from 'bun:test'
import { escapeLike, searchTerms } from './rules'
import { parseEventChanges as parseChanges, parseOrdering } from './validation'

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

  test('PATCH members are checked one by one and unknown ones named', () => {
    expect(parseChanges({ name: 'x', tags: [' A ', 'a', 'b'], post_to_chat: true, last_seen_at: '2024-01-01T00:00:00Z', created_at: null })).toEqual({
      name: 'x',
      tags: ['a', 'b'],
      post_to_chat: true,
      last_seen_at: new Date('2024-01-01T00:00:00Z'),
      created_at: null,
    })
    const attr = (body: unknown) => {
      try {
        parseChanges(body)
      } catch (e) {
        return (e as { attr: string }).attr
      }
    }
    expect(attr({ description: 'x' })).toBe('description')
    expect(attr({ name: '' })).toBe('name')
    expect(attr({ tags: 'x' })).toBe('tags')
    expect(attr({ post_to_chat: 'yes' })).toBe('post_to_chat')
    expect(attr({ last_seen_at: 'soon' })).toBe('last_seen_at')
  })
})
