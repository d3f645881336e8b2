import { describe, expect, test } from 'bun:test'
import { PythonException } from './dates'
import { boundedValue, compileProperty, matchAbsent, matchPresent, MAX_MATCHED_VALUE_CHARS, Op, OVERSIZED_VALUE } from './operators'

const NOW = new Date('2020-01-01T12:01:20.134Z')
/** match_property({key, value, operator}, {key: override}) on the server */
const m = (operator: string | null | undefined, value: unknown, override: unknown) =>
  matchPresent(compileProperty({ key: 'k', operator, value }), override, NOW)

describe('exact', () => {
  test('a missing or null operator means exact', () => {
    expect(m(undefined, 'a', 'a')).toBe(true)
    expect(m(null, 'a', 'b')).toBe(false)
    expect(compileProperty({ key: 'k', value: 1 }).op).toBe(Op.Exact)
  })
  test('case-insensitive, numbers and strings coerce: 307 == "307" == [307] == ["307"]', () => {
    expect(m('exact', 'Test@PostHog.com', 'test@posthog.COM')).toBe(true)
    for (const value of [307, '307', [307], ['307']]) {
      expect(m('exact', value, 307)).toBe(true)
      expect(m('exact', value, '307')).toBe(true)
    }
  })
  test('lists match any element', () => {
    expect(m('exact', ['a', 'b'], 'B')).toBe(true)
    expect(m('exact', ['a', 'b'], 'c')).toBe(false)
  })
  test('boolean-like values compare str(override).lower() with "true"/"false"', () => {
    for (const value of [true, 'true', 'True', ['true'], [true], ['True'], '"true"', '[true]']) {
      expect(m('exact', value, true)).toBe(true)
      expect(m('exact', value, 'true')).toBe(true)
      expect(m('exact', value, 'TRUE')).toBe(true)
      expect(m('exact', value, 1)).toBe(false)
      expect(m('exact', value, false)).toBe(false)
    }
    for (const value of [false, 'false', 'False', ['false'], [false]]) {
      expect(m('exact', value, false)).toBe(true)
      expect(m('exact', value, 'False')).toBe(true)
      expect(m('exact', value, 0)).toBe(false)
    }
  })
  test('Python list equality: [1] is boolean-like ([1] == [True]), so the override must be true', () => {
    expect(m('exact', [1], 1)).toBe(false)
    expect(m('exact', [1], true)).toBe(true)
    expect(m('exact', 1, 1)).toBe(true)
    expect(m('exact', 1, true)).toBe(false) // "true" != "1"
  })
  test('None prints as "None": a null override only equals the value "none"', () => {
    expect(m('exact', 'none', null)).toBe(true)
    expect(m('exact', 'None', null)).toBe(true)
    expect(m('exact', '', null)).toBe(false)
    expect(m('exact', null, 'None')).toBe(true)
  })
  test('str(1.5) is "1.5"; str() of lists and dicts is their Python repr', () => {
    expect(m('exact', '1.5', 1.5)).toBe(true)
    expect(m('exact', "['a']", ['a'])).toBe(true)
    expect(m('exact', "{'a': 1}", { a: 1 })).toBe(true)
  })
})

describe('is_not: the negation of exact, lists included', () => {
  test('matches when the override is none of the values', () => {
    expect(m('is_not', ['a', 'b'], 'c')).toBe(true)
    expect(m('is_not', ['a', 'b'], 'A')).toBe(false)
    expect(m('is_not', 'true', true)).toBe(false)
    expect(m('is_not', 'true', false)).toBe(true)
    expect(m('is_not', 'x', null)).toBe(true)
  })
})

describe('is_set / is_not_set on a present key', () => {
  test('is_set is true even for a null value; is_not_set is false', () => {
    expect(m('is_set', 'is_set', null)).toBe(true)
    expect(m('is_set', null, 'x')).toBe(true)
    expect(m('is_not_set', 'is_not_set', null)).toBe(false)
    expect(m('is_not_set', null, 'x')).toBe(false)
  })
})

describe('icontains / not_icontains', () => {
  test('case-insensitive substring of str(override)', () => {
    expect(m('icontains', 'POST', 'test@posthog.com')).toBe(true)
    expect(m('icontains', 'x', 'abc')).toBe(false)
    expect(m('not_icontains', 'POST', 'test@posthog.com')).toBe(false)
    expect(m('not_icontains', 'x', 'abc')).toBe(true)
  })
  test('icontains "no" matches a null override ("None")', () => {
    expect(m('icontains', 'no', null)).toBe(true)
    expect(m('not_icontains', 'no', null)).toBe(false)
  })
  test('numbers are stringified', () => {
    expect(m('icontains', 3, 1234)).toBe(true)
    expect(m('icontains', '.5', 1.5)).toBe(true)
  })
})

describe('regex / not_regex', () => {
  test('case-insensitive search', () => {
    expect(m('regex', '^.*@posthog\\.com$', 'Test@PostHog.com')).toBe(true)
    expect(m('regex', 'posthog', 'x@POSTHOG.io')).toBe(true)
    expect(m('not_regex', 'posthog', 'x@POSTHOG.io')).toBe(false)
    expect(m('not_regex', '^z', 'abc')).toBe(true)
  })
  test('an invalid pattern is false for both regex and not_regex', () => {
    for (const bad of ['[', '(?P<>x)', '\\q', '(a', '*']) {
      expect(m('regex', bad, 'anything')).toBe(false)
      expect(m('not_regex', bad, 'anything')).toBe(false)
    }
  })
  test('the subject is str(override): None, True, numbers', () => {
    expect(m('regex', '^None$', null)).toBe(true)
    expect(m('regex', '^true$', true)).toBe(true) // "True", matched case-insensitively
    expect(m('regex', '^12\\.5$', 12.5)).toBe(true)
  })
})

describe('gt / gte / lt / lte: the typed coercion rule', () => {
  test('{"value":"30","operator":"lt"}: "100" compares as a string (true), 100 as a number (false)', () => {
    expect(m('lt', '30', '100')).toBe(true)
    expect(m('lt', '30', 100)).toBe(false)
  })
  test('{"value":1,"operator":"gt"}: "23" → true (string "23" > "1")', () => {
    expect(m('gt', 1, '23')).toBe(true)
    expect(m('gt', 1, '0')).toBe(false)
  })
  test('numeric overrides compare with float(value)', () => {
    expect(m('gt', '1.5', 2)).toBe(true)
    expect(m('gte', 5, 5)).toBe(true)
    expect(m('lte', '5', 5.5)).toBe(false)
    expect(m('lt', 1, true)).toBe(false) // True == 1
    expect(m('gt', 0, true)).toBe(true)
  })
  test('"123aloha" does not parse: the override 129 falls back to strings, "129" > "123aloha"', () => {
    expect(m('gt', '123aloha', 129)).toBe(true)
    expect(m('lt', '123aloha', 129)).toBe(false)
  })
  test('a null override compares "None" with str(value): gt true, lt false', () => {
    expect(m('gt', 1, null)).toBe(true)
    expect(m('gt', '1', null)).toBe(true)
    expect(m('lt', 1, null)).toBe(false)
  })
  test('strings compare by code point', () => {
    expect(m('gt', '\uff5e', '😀')).toBe(true)
  })
  test('NaN never compares', () => {
    expect(m('gt', 'nan', 5)).toBe(false)
    expect(m('lt', 'nan', 5)).toBe(false)
  })
  test('a list or dict override with a numeric value raises TypeError in Python (flag error)', () => {
    expect(() => m('gt', 1, [1])).toThrow(PythonException)
    expect(() => m('lt', 1, { a: 1 })).toThrow(PythonException)
    expect(m('gt', 'abc', [1])).toBe(false) // value not numeric: "[1]" vs "abc" as strings
  })
})

describe('date operators', () => {
  test('ISO strings, with and without zone', () => {
    expect(m('is_date_before', '2022-05-01', '2022-04-30T23:59:59Z')).toBe(true)
    expect(m('is_date_before', '2022-05-01', '2022-05-01T00:00:00Z')).toBe(false)
    expect(m('is_date_after', '2022-05-01T00:00:00+02:00', '2022-04-30T23:00:00Z')).toBe(true)
    expect(m('is_date_exact', '2022-05-01', '2022-05-01T00:00:00.000Z')).toBe(true)
    expect(m('is_date_exact', '2022-05-01', '2022-05-01T00:00:00.000001Z')).toBe(false)
  })
  test('numbers are Unix seconds', () => {
    expect(m('is_date_after', '2019-12-31', 1577836800)).toBe(true) // 2020-01-01T00:00:00Z
    expect(m('is_date_exact', '2020-01-01T00:00:00Z', 1577836800)).toBe(true)
    expect(m('is_date_exact', '2020-01-01T00:00:00Z', '1577836800')).toBe(true)
  })
  test('a millisecond timestamp read as seconds is beyond year 9999: Python raises (flag error)', () => {
    expect(() => m('is_date_before', '2020-01-01', 1577836800000)).toThrow(PythonException)
    expect(m('is_date_before', '2020-01-01', '1577836800000')).toBe(false) // as a string: unparseable
  })
  test('relative filter values count back from now', () => {
    expect(m('is_date_after', '-7d', '2019-12-26T00:00:00Z')).toBe(true)
    expect(m('is_date_after', '7d', '2019-12-24T00:00:00Z')).toBe(false)
    expect(m('is_date_before', '1m', '2019-11-30')).toBe(true)
  })
  test('an unparseable filter value or override gives false', () => {
    expect(m('is_date_before', 'bazinga', '2020-01-01')).toBe(false)
    expect(m('is_date_after', '2020-01-01', 'bazinga')).toBe(false)
    expect(m('is_date_after', '2020-01-01', null)).toBe(false)
    expect(m('is_date_after', 1577836800, 1577836801)).toBe(false) // a numeric *filter* value is not a timestamp
  })
  test('a numeric override outside datetime range raises in Python (flag error)', () => {
    expect(() => m('is_date_after', '2020-01-01', 1e20)).toThrow(PythonException)
  })
})

describe('unknown operators', () => {
  test('are false (present or missing)', () => {
    expect(m('weird', 'a', 'a')).toBe(false)
    expect(m('in', [1], 1)).toBe(false)
    expect(m(5 as unknown as string, 'a', 'a')).toBe(false)
    expect(matchAbsent(compileProperty({ key: 'k', operator: 'weird', value: 'a' }), false)).toBe(false)
  })
})

describe('stored property missing, or stored as JSON null', () => {
  const absent = (operator: string, value: unknown = 'x') => ({
    missing: matchAbsent(compileProperty({ key: 'k', operator, value }), false),
    null: matchAbsent(compileProperty({ key: 'k', operator, value }), true),
  })
  test('exact, icontains, regex, gt/gte/lt/lte, dates, is_set(missing) are false', () => {
    for (const op of ['exact', 'icontains', 'regex', 'gt', 'gte', 'lt', 'lte', 'is_date_before', 'is_date_after', 'is_date_exact']) {
      expect(absent(op)).toEqual({ missing: false, null: false })
    }
  })
  test('is_not, not_icontains, not_regex are true', () => {
    for (const op of ['is_not', 'not_icontains', 'not_regex']) expect(absent(op)).toEqual({ missing: true, null: true })
  })
  test('is_set: missing false, null true; is_not_set: missing true, null false', () => {
    expect(absent('is_set')).toEqual({ missing: false, null: true })
    expect(absent('is_not_set')).toEqual({ missing: true, null: false })
  })
  test('an invalid regex is false even for not_regex', () => {
    expect(absent('not_regex', '[')).toEqual({ missing: false, null: false })
  })
})

describe('compileProperty', () => {
  test('precompiles the regex once', () => {
    const p = compileProperty({ key: 'k', operator: 'regex', value: 'ab+' })
    expect(p.regex?.source).toBe('a(?:b)+')
    expect(matchPresent(p, 'xABBy', NOW)).toBe(true)
  })
  test('rejects filters without a string key', () => {
    expect(() => compileProperty({ value: 1 })).toThrow()
    expect(() => compileProperty(null)).toThrow()
    expect(() => compileProperty({ key: 5 })).toThrow()
  })
  test('cohort filters are marked', () => {
    expect(compileProperty({ key: 'id', type: 'cohort', value: 3 }).isCohort).toBe(true)
  })
})

describe('values over the size limit match nothing', () => {
  const now = new Date('2026-01-01T00:00:00Z')
  const huge = 'x'.repeat(MAX_MATCHED_VALUE_CHARS + 1)
  test('a string over the limit: every operator false, negations included', () => {
    for (const operator of ['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'lt', 'is_date_after', 'is_date_before', 'is_set']) {
      const p = compileProperty({ key: 'plan', operator, value: 'x', type: 'person' })
      expect([operator, matchPresent(p, huge, now)]).toEqual([operator, false])
    }
    // at the limit it is still matched
    expect(matchPresent(compileProperty({ key: 'plan', operator: 'icontains', value: 'x' }), huge.slice(1), now)).toBe(true)
  })
  test('a list of three million values is cut after the budget, not walked whole', () => {
    const list = new Array(3_000_000).fill(0)
    expect(boundedValue(list)).toBe(OVERSIZED_VALUE)
    expect(boundedValue({ a: 'y'.repeat(MAX_MATCHED_VALUE_CHARS) })).toBe(OVERSIZED_VALUE)
    const small = { a: [1, 2, 3], b: 'ok' }
    expect(boundedValue(small)).toBe(small)
    expect(matchPresent(compileProperty({ key: 'plan', operator: 'is_not', value: 'x' }), OVERSIZED_VALUE, now)).toBe(false)
  })
})
