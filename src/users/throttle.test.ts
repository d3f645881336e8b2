import { describe, expect, test } from 'bun:test'
import { pastLimit, subjectsOf, waitAfter } from './throttle'

const taken = (subject: string, attempts: number, secondsLeft = 600) => ({ subject, attempts, windowStartedAt: '2026-01-01 00:00:00+00', secondsLeft })
const limits = { perEmail: 10, perAddress: 50 }

describe('sign-in throttle rules (the counting itself is in Postgres: console-auth and sign-in-limits tests)', () => {
  test('an attempt counts for its email and, when per-address limiting is on, its address (bounded in length)', () => {
    expect(subjectsOf('a@example.com', '192.0.2.1', 50)).toEqual(['email:a@example.com', 'ip:192.0.2.1'])
    expect(subjectsOf('a@example.com', '192.0.2.1', 0)).toEqual(['email:a@example.com'])
    expect(subjectsOf('a@example.com', '2001:db8:0:1::7', 50)).toEqual(['email:a@example.com', 'ip:2001:db8:0:1::/64'])
    expect(subjectsOf('a@example.com', null, 50)).toEqual(['email:a@example.com'])
    expect(subjectsOf('a@example.com', 'x'.repeat(10_000), 50)[1].length).toBe(300)
  })

  test('the 11th attempt for an email (the 51st for an address) waits for the end of the window', () => {
    expect(pastLimit(taken('email:a@example.com', 10), limits)).toBe(false)
    expect(pastLimit(taken('email:a@example.com', 11), limits)).toBe(true)
    expect(pastLimit(taken('ip:192.0.2.1', 50), limits)).toBe(false)
    expect(waitAfter([taken('email:a@example.com', 3), taken('ip:192.0.2.1', 51, 12.2)], limits)).toBe(13)
    expect(waitAfter([taken('email:a@example.com', 11, 0.01)], limits)).toBe(1)
    expect(waitAfter([taken('email:a@example.com', 10)], limits)).toBe(0)
  })
})
