import { describe, expect, test } from 'bun:test'
import { booleanLikeFilterValue, compareCodePoints, parseFilterValue, pyFloat, pyFloatFromString, pyRepr, pyStr } from './pyvalue'

describe('pyStr / pyRepr: Python str() of JSON values', () => {
  test('None, booleans, strings', () => {
    expect(pyStr(null)).toBe('None')
    expect(pyStr(undefined)).toBe('None')
    expect(pyStr(true)).toBe('True')
    expect(pyStr(false)).toBe('False')
    expect(pyStr('abc')).toBe('abc')
  })
  test('integral numbers print as ints (JS cannot tell 1.0 from 1; Python would print "1.0")', () => {
    expect(pyStr(1)).toBe('1')
    expect(pyStr(1.0)).toBe('1')
    expect(pyStr(-0)).toBe('0')
    expect(pyStr(307)).toBe('307')
    expect(pyStr(9007199254740991)).toBe('9007199254740991')
  })
  test('floats print like Python repr: scientific below 1e-4 and from 1e16, two-digit exponents', () => {
    expect(pyStr(1.5)).toBe('1.5')
    expect(pyStr(0.1)).toBe('0.1')
    expect(pyStr(0.0001)).toBe('0.0001')
    expect(pyStr(0.00001)).toBe('1e-05')
    expect(pyStr(1.5e-10)).toBe('1.5e-10')
    expect(pyStr(-2.5e-7)).toBe('-2.5e-07')
    expect(pyStr(12345678.5)).toBe('12345678.5')
    expect(pyStr(1e16)).toBe('1e+16')
    expect(pyStr(1e20)).toBe('1e+20')
    expect(pyStr(1.2345678901234568e17)).toBe('1.2345678901234568e+17')
    expect(pyStr(1e300)).toBe('1e+300')
  })
  test('lists and dicts print as Python repr', () => {
    expect(pyStr([1, 'a', true, null, 1.5])).toBe("[1, 'a', True, None, 1.5]")
    expect(pyStr({ a: 1, b: [1, 2] })).toBe("{'a': 1, 'b': [1, 2]}")
    expect(pyStr([])).toBe('[]')
    expect(pyStr({})).toBe('{}')
  })
  test('string repr picks quotes and escapes like Python', () => {
    expect(pyRepr("it's")).toBe('"it\'s"')
    expect(pyRepr('say "hi"')).toBe('\'say "hi"\'')
    expect(pyRepr('both \' and "')).toBe("'both \\' and \"'")
    expect(pyRepr('a\\b\n\t\r')).toBe("'a\\\\b\\n\\t\\r'")
    expect(pyRepr('\x00\x7f\x85é😀\u200b')).toBe("'\\x00\\x7f\\x85é😀\\u200b'")
  })
})

describe('pyFloat: Python float()', () => {
  test('accepts Python float syntax', () => {
    expect(pyFloatFromString('1')).toBe(1)
    expect(pyFloatFromString(' 12 ')).toBe(12)
    expect(pyFloatFromString('1_000')).toBe(1000)
    expect(pyFloatFromString('.5')).toBe(0.5)
    expect(pyFloatFromString('5.')).toBe(5)
    expect(pyFloatFromString('-1e3')).toBe(-1000)
    expect(pyFloatFromString('1e400')).toBe(Infinity)
    expect(pyFloatFromString('-Infinity')).toBe(-Infinity)
    expect(pyFloatFromString('inf')).toBe(Infinity)
    expect(Number.isNaN(pyFloatFromString('nan'))).toBe(true)
    expect(pyFloatFromString('٣')).toBe(3) // Unicode decimal digits
  })
  test('rejects what Python rejects', () => {
    for (const s of ['', ' ', 'abc', '123aloha', '1__0', '_1', '1_', '1e', 'e5', '0x10', '1,5', '²']) expect(pyFloatFromString(s)).toBeNull()
  })
  test('non-strings: numbers as is, booleans as 1/0, everything else raises (null)', () => {
    expect(pyFloat(2.5)).toBe(2.5)
    expect(pyFloat(true)).toBe(1)
    expect(pyFloat(false)).toBe(0)
    expect(pyFloat(null)).toBeNull()
    expect(pyFloat([1])).toBeNull()
    expect(pyFloat({})).toBeNull()
  })
})

describe('parseFilterValue: Property._parse_value (PPV)', () => {
  const rows: [unknown, unknown][] = [
    ['hello', 'hello'],
    [42, 42],
    [3.14, 3.14],
    ['true', true],
    ['false', false],
    ['True', true],
    ['False', false],
    [true, true],
    [false, false],
    [['a', 'b', 'c'], ['a', 'b', 'c']],
    [[1, 2, 3], [1, 2, 3]],
    [['true', 'false', true, false], [true, false, true, false]],
    ['123', '123'],
    ['123.45', '123.45'],
    ['0', '0'],
    ['-42', '-42'],
    ['1e10', '1e10'],
    ['68220362511491315356e330', '68220362511491315356e330'],
    ['-1e10', '-1e10'],
    ['1E10', '1E10'],
    ['+1e10', '+1e10'],
    ['1e400', '1e400'],
    ['-1e400', '-1e400'],
    ['{"key": "value"}', { key: 'value' }],
    ['["a", "b", "c"]', ['a', 'b', 'c']],
    ['42', '42'],
    ['', ''],
    ['   ', '   '],
    ['!@#$%^&*()', '!@#$%^&*()'],
    ['🚀', '🚀'],
    [null, null],
    ['{"invalid": json}', '{"invalid": json}'],
    ['"true"', 'true'],
    [[['nested', '1e400']], [['nested', '1e400']]],
  ]
  for (const [input, expected] of rows) {
    test(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => {
      expect(parseFilterValue(input)).toEqual(expected)
    })
  }
})

describe('booleanLikeFilterValue: is_truthy_or_falsy_property_value and its truthiness', () => {
  test('booleans and the four strings, alone or as a one-element list', () => {
    expect(booleanLikeFilterValue(true)).toBe(true)
    expect(booleanLikeFilterValue('True')).toBe(true)
    expect(booleanLikeFilterValue(['true'])).toBe(true)
    expect(booleanLikeFilterValue([true])).toBe(true)
    expect(booleanLikeFilterValue(false)).toBe(false)
    expect(booleanLikeFilterValue(['False'])).toBe(false)
    expect(booleanLikeFilterValue('false')).toBe(false)
  })
  test('Python list equality makes [1] == [True] and [0] == [False]', () => {
    expect(booleanLikeFilterValue([1])).toBe(true)
    expect(booleanLikeFilterValue([0])).toBe(false)
    expect(booleanLikeFilterValue([0.0])).toBe(false)
  })
  test('plain 1/0, other strings and longer lists are not boolean-like', () => {
    for (const v of [1, 0, 'TRUE', 'yes', ['true', 'false'], [], null, [2]]) expect(booleanLikeFilterValue(v)).toBeNull()
  })
})

describe('compareCodePoints: Python string order', () => {
  test('orders by code point, not UTF-16 unit', () => {
    expect(compareCodePoints('\uff5e', '😀')).toBe(-1) // JS '<' says the opposite
    expect('\uff5e' < '😀').toBe(false)
    expect(compareCodePoints('100', '30')).toBe(-1)
    expect(compareCodePoints('abc', 'abc')).toBe(0)
    expect(compareCodePoints('ab', 'abc')).toBe(-1)
    expect(compareCodePoints('None', '1')).toBe(1)
  })
})
