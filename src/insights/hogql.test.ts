import { describe, expect, test } from 'bun:test'
import { tokenize } from '../query/lexer'
import { parseQuery } from '../query/parser'
import { evaluateFormula, parseFormula } from './formula'
import { propertiesCondition } from './filters'
import { localTime, str } from './hogql'

describe('str: any value is one string literal of the HogQL lexer', () => {
  for (const value of ["it's", 'back\\slash', "x') OR 1=1 --", '\n\r\t\0', "'' \\' \\\\'", '😀 é', '--', '/* */']) {
    test(JSON.stringify(value), () => {
      const tokens = tokenize(str(value), 10)
      expect(tokens.filter((t) => t.kind !== 'eof').map((t) => [t.kind, t.text])).toEqual([['string', value]])
    })
  }
})

describe('property filters read as one condition, whatever the values', () => {
  test('hostile values stay values', () => {
    const condition = propertiesCondition([{ key: "k') OR (1", value: ["a' OR 1=1 --", '%_\\'], operator: 'exact' }, { key: 'q', value: "%'", operator: 'icontains' }], 'query__properties')!
    const select = parseQuery(`SELECT count() FROM events WHERE ${condition}`)
    expect(select.where?.k).toBe('binary')
    expect(select.columns).toHaveLength(1)
  })
  test('a missing value for an operator that needs one is refused by member', () => {
    expect(() => propertiesCondition([{ key: 'k', operator: 'exact' }], 'query__properties')).toThrow(expect.objectContaining({ attr: 'query__properties__0' }))
    expect(() => propertiesCondition([{ key: 'k', value: 'x', type: 'person' }], 'query__properties')).toThrow(expect.objectContaining({ status: 400 }))
  })
})

describe('localTime: one branch per offset span of the range', () => {
  test('UTC is the timestamp itself; a zone without clock changes one shift; New York in March two spans', () => {
    expect(localTime('UTC', Date.UTC(2024, 0, 1), Date.UTC(2024, 11, 31))).toBe('timestamp')
    expect(localTime('Asia/Kolkata', Date.UTC(2024, 0, 1), Date.UTC(2024, 11, 31))).toBe('timestamp + INTERVAL 19800 SECOND')
    const ny = localTime('America/New_York', Date.UTC(2024, 2, 1), Date.UTC(2024, 2, 31))
    expect(ny).toBe("CASE WHEN timestamp < toDateTime('2024-03-10T07:00:00.000Z') THEN timestamp - INTERVAL 18000 SECOND ELSE timestamp - INTERVAL 14400 SECOND END")
    expect(() => parseQuery(`SELECT toStartOfDay(${ny}) FROM events`)).not.toThrow()
  })
})

describe('formulas', () => {
  const value = (text: string, series: number[]) => evaluateFormula(parseFormula(text, series.length, 'f'), series)
  test('precedence, parentheses, unary minus, lower-case letters, division by zero as 0', () => {
    expect(value('A + B * 10', [1, 2])).toBe(21)
    expect(value('(A + B) * 10', [1, 2])).toBe(30)
    expect(value('-a / b', [6, 3])).toBe(-2)
    expect(value('A / B', [5, 0])).toBe(0)
    expect(value('(A - B) / A * 100', [200, 50])).toBe(75)
  })
  test('refused: unknown series, stray characters, unclosed parentheses, too deep', () => {
    expect(() => parseFormula('A + C', 2, 'f')).toThrow(/no series C/)
    expect(() => parseFormula('A ; B', 2, 'f')).toThrow(/unexpected ";"/)
    expect(() => parseFormula('(A + B', 2, 'f')).toThrow(/not closed/)
    expect(() => parseFormula('('.repeat(100) + 'A' + ')'.repeat(100), 1, 'f')).toThrow(/nested too deeply/)
  })
})
