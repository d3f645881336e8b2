import { describe, expect, test } from 'bun:test'
import { QueryError } from './errors'
import { parseExpression } from './parser'

describe('parseExpression: exactly one expression', () => {
  test('an expression, its text without surrounding comments, an alias or a direction', () => {
    expect(parseExpression("  properties.$browser -- the browser\n")).toMatchObject({ text: 'properties.$browser', alias: null, desc: null })
    expect(parseExpression('count() AS total', { alias: true })).toMatchObject({ text: 'count()', alias: 'total' })
    expect(parseExpression('timestamp DESC', { order: true })).toMatchObject({ text: 'timestamp', desc: true })
    expect(parseExpression('event asc', { order: true })).toMatchObject({ text: 'event', desc: false })
    // a comment inside keeps its line break in the text: placed in a query it cannot reach past its line
    expect(parseExpression("event -- x\n = 'a'").text).toBe("event -- x\n = 'a'")
  })

  test('anything after the expression is refused', () => {
    const refusals = [
      "event = 'a' FROM events",
      'event, uuid',
      "1) OR (1 = 1",
      'event; SELECT 1',
      'count() AS total',
      'timestamp DESC',
      '',
      '-- only a comment',
      "event = 'a' UNION ALL SELECT 1",
    ]
    for (const text of refusals) expect(() => parseExpression(text)).toThrow(QueryError)
    expect(() => parseExpression('x AS y AS z', { alias: true })).toThrow(/Expected one expression/)
  })
})
