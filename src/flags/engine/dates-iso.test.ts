// The ISO 8601 shortcut of parseIncomingDate must agree with the general (dateutil) parser exactly.
import { describe, expect, test } from 'bun:test'
import { parseDateString, parseIsoDate } from './dates'

const NOW = new Date('2020-01-01T12:01:20.134Z')

function rand(seed: number): () => number {
  let s = seed >>> 0
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
}

describe('ISO 8601 shortcut', () => {
  test('agrees with dateutil on generated dates, times, fractions and offsets', () => {
    const r = rand(7)
    const pad = (n: number, w = 2) => String(n).padStart(w, '0')
    let checked = 0
    for (let i = 0; i < 5000; i++) {
      const y = 1 + Math.floor(r() * 9998)
      const mo = 1 + Math.floor(r() * 12)
      const d = 1 + Math.floor(r() * 31)
      let s = `${pad(y, 4)}-${pad(mo)}-${pad(d)}`
      if (r() < 0.8) {
        s += `${r() < 0.5 ? 'T' : ' '}${pad(Math.floor(r() * 24))}:${pad(Math.floor(r() * 60))}:${pad(Math.floor(r() * 60))}`
        if (r() < 0.6) s += `.${String(Math.floor(r() * 1e6)).slice(0, 1 + Math.floor(r() * 6))}`
        const z = r()
        if (z < 0.3) s += 'Z'
        else if (z < 0.6) s += `${r() < 0.5 ? '+' : '-'}${pad(Math.floor(r() * 15))}:${pad(Math.floor(r() * 4) * 15)}`
        else if (z < 0.7) s += `${r() < 0.5 ? '+' : '-'}${pad(Math.floor(r() * 15))}${pad(Math.floor(r() * 4) * 15)}`
      }
      const fast = parseIsoDate(s)
      if (fast === undefined) continue // out of range for the month: left to dateutil
      checked++
      expect({ s, v: fast }).toEqual({ s, v: parseDateString(s, NOW)! })
    }
    expect(checked).toBeGreaterThan(4000)
  })

  test('what it does not take, dateutil decides', () => {
    for (const s of ['2024-02-30', '2024-13-01', '2024-01-01T24:00:00', '2024-01-01T10:00', '2024-01-01T10:00:00.1234567', '0000-01-01', '01/02/2024', 'now', '2024-01-01T10:00:00+24:00']) {
      expect(parseIsoDate(s)).toBeUndefined()
    }
    expect(parseIsoDate('2024-02-29')).toEqual(parseDateString('2024-02-29', NOW)!)
  })
})
