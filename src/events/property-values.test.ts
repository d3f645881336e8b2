import { describe, expect, test } from 'bun:test'
import { ApiError } from '../http/errors'
import { compileQuery } from '../query/compile'
import type { DialectName } from '../query/dialect'
import { parseQuery } from '../query/parser'
import { PROPERTY_VALUE_LIMITS, propertyValuesQuery, type PropertyValueRequest } from './property-values'

const refusedAttr = (request: PropertyValueRequest): string | null => {
  try {
    propertyValuesQuery(request)
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(400)
    return (error as ApiError).attr
  }
  throw new Error(`not refused: ${JSON.stringify(request).slice(0, 100)}`)
}

describe('property value suggestions: the HogQL text', () => {
  test('user values enter only as quoted literals, and the text compiles on every dialect', () => {
    const text = propertyValuesQuery({ key: "plan' OR 1=1 --", value: "50%_off' --", eventName: "buy'" })
    expect(text).toContain("properties['plan\\' OR 1=1 --']")
    expect(text).toContain("ILIKE '%50\\\\%\\\\_off\\' --%'")
    expect(text).toContain("event = 'buy\\''")
    expect(text).toContain(`LIMIT ${PROPERTY_VALUE_LIMITS.values}`)
    for (const dialect of ['sqlite', 'clickhouse-legacy', 'clickhouse-modern'] as DialectName[]) {
      const compiled = compileQuery(parseQuery(text), { dialect, teamId: 7, database: 'db', now: Date.UTC(2024, 0, 10) })
      expect(compiled.columns).toEqual(['v', 'n'])
    }
  })

  test('each bound refused by the field at fault', () => {
    expect(refusedAttr({ key: '' })).toBe('key')
    expect(refusedAttr({ key: 'k'.repeat(PROPERTY_VALUE_LIMITS.keyChars + 1) })).toBe('key')
    for (const key of ['a"b', 'a\\b', 'a\u0001b']) expect(refusedAttr({ key })).toBe('key')
    expect(refusedAttr({ key: 'plan', value: 'v'.repeat(PROPERTY_VALUE_LIMITS.prefixChars + 1) })).toBe('value')
    expect(refusedAttr({ key: 'plan', eventName: 'e'.repeat(PROPERTY_VALUE_LIMITS.eventNameChars + 1) })).toBe('event_name')
    // at the bounds: accepted
    expect(propertyValuesQuery({ key: 'k'.repeat(400), value: 'v'.repeat(200), eventName: 'e'.repeat(400) })).toContain('GROUP BY v')
  })
})
