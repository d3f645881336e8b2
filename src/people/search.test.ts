import { describe, expect, test } from 'bun:test'
import { ApiError } from '../http/errors'
import { emailPattern, parsePropertyFilters, parseSearch, PERSON_SEARCH_LIMITS } from './search'

function refusal(work: () => unknown): { status: number; attr: string | null } {
  try {
    work()
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, attr: error.attr }
    throw error
  }
  throw new Error('not refused')
}

describe('persons search', () => {
  test('a term is trimmed; an empty one is no search; a long one is a 400 naming search', () => {
    expect(parseSearch('  ann@example.com ')).toBe('ann@example.com')
    expect(parseSearch('   ')).toBeUndefined()
    expect(parseSearch(undefined)).toBeUndefined()
    expect(refusal(() => parseSearch('x'.repeat(PERSON_SEARCH_LIMITS.searchChars + 1)))).toEqual({ status: 400, attr: 'search' })
  })

  test("LIKE's wildcards in a term match themselves", () => {
    expect(emailPattern('a_b%')).toBe('%a\\_b\\%%')
  })

  test('property filters: exact values, bounded in size, count and shape', () => {
    expect(parsePropertyFilters('[{"key":"plan","value":"pro","operator":"exact","type":"person"}]')).toEqual([{ key: 'plan', values: ['pro'] }])
    expect(parsePropertyFilters('[{"key":"age","value":[30,31]}]')).toEqual([{ key: 'age', values: ['30', '31'] }])
    expect(parsePropertyFilters(undefined)).toEqual([])
    const attacks = [
      'not json',
      '{"key":"a"}',
      JSON.stringify(Array.from({ length: PERSON_SEARCH_LIMITS.filters + 1 }, () => ({ key: 'a', value: 'b' }))),
      JSON.stringify([{ key: 'a', value: 'b'.repeat(PERSON_SEARCH_LIMITS.propertiesChars) }]),
      '[{"key":"a","value":{"deep":[1]}}]',
      '[{"key":"a","value":"b","operator":"regex"}]',
      '[{"key":"","value":"b"}]',
      '[{"key":"a","value":[]}]',
    ]
    for (const raw of attacks) expect(refusal(() => parsePropertyFilters(raw))).toEqual({ status: 400, attr: 'properties' })
  })
})
