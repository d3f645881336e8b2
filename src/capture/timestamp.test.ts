import { describe, expect, test } from 'bun:test'
import { parseAnyTimestamp, parseTimestamp } from './timestamp'

/** Timestamps around the edges of the fast path, built from parts (every combination of a few of each). */
function variants(): string[] {
  const out: string[] = []
  const dates = ['2024-06-01', '2024-02-31', '2024-00-10', '2024-13-01', '2024-06-00', '2024-06-32', '0999-01-01', '1000-01-01', '0050-01-01', '9999-12-31', '1969-12-31', '2O24-06-01']
  const times = ['T12:00:00', 'T23:59:59', 'T24:00:00', 'T23:59:60', 'T12:60:00', 't12:00:00', ' 12:00:00', 'T12:00', 'T1:00:00', 'T12:00:0x']
  const fractions = ['', '.', '.1', '.12', '.123', '.1234', '.123456', ',5', '.9999']
  const zones = ['', 'Z', 'z', ' Z', 'ZZ', '+00:00', '-05:30', '+99:99', '+02', '-0430', '+1:00', '+01:0', '+01:00Z', '+01:00 ']
  for (const d of dates) for (const t of times) for (const f of fractions) for (const z of zones) out.push(`${d}${t}${f}${z}`)
  return out
}

describe('timestamps', () => {
  test('the fast path for the common ISO forms reads them as the general path does, edge values included', () => {
    const inputs = [...variants(), ' 2024-06-01T12:00:00Z', '2024-06-01T12:00:00Z ', '', '2024-06-01T12:00:00.Z']
    for (let ms = -1e11; ms < 4e12; ms += 7_777_777_777) inputs.push(new Date(ms).toISOString())
    for (const s of inputs) expect([s, parseTimestamp(s)]).toEqual([s, parseAnyTimestamp(s)])
  })

  test('what clients send: JavaScript toISOString, Python isoformat, with and without a zone', () => {
    const at = Date.UTC(2024, 5, 1, 12, 0, 0, 123)
    expect(parseTimestamp('2024-06-01T12:00:00.123Z')).toBe(at)
    expect(parseTimestamp('2024-06-01T12:00:00.123456+00:00')).toBe(at)
    expect(parseTimestamp('2024-06-01T14:00:00.123+02:00')).toBe(at)
    expect(parseTimestamp('2024-06-01T06:30:00.123-05:30')).toBe(at)
    expect(parseTimestamp('2024-06-01T12:00:00.123')).toBe(at)
    expect(parseTimestamp('2024-06-01T12:00:00.1Z')).toBe(at - 23)
    expect(parseTimestamp('2024-02-30T00:00:00Z')).toBe(Date.UTC(2024, 2, 1))
    expect(parseTimestamp('2024-06-01T12:00:60Z')).toBe(Date.UTC(2024, 5, 1, 12, 1))
    expect(parseTimestamp('0050-01-01T00:00:00Z')).toBe(new Date('0050-01-01T00:00:00Z').getTime())
  })
})
