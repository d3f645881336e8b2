import { describe, expect, test } from 'bun:test'
import { costOf, RecordingBudget } from './budget'

const one = (projectId: number, sessionId: string, bytes: number) => ({ projectId, sessions: new Map([[sessionId, bytes]]) })

describe('recording budgets', () => {
  test('a session is refused once its total would pass the cap; another session goes on', () => {
    const budget = new RecordingBudget({ maxSessionBytes: 1000, maxProjectDailyBytes: 0 })
    expect(budget.take(one(1, 's1', 600))).toBeNull()
    expect(budget.take(one(1, 's1', 400))).toBeNull() // exactly the cap
    expect(budget.take(one(1, 's1', 1))).toBe('session_bytes')
    expect(budget.take(one(1, 's2', 1000))).toBeNull()
    // the same session id in another project is another session
    expect(budget.take(one(2, 's1', 1000))).toBeNull()
  })

  test('a refused request takes nothing; a request with one session under its cap is kept', () => {
    const budget = new RecordingBudget({ maxSessionBytes: 1000, maxProjectDailyBytes: 0 })
    expect(budget.take(one(1, 'full', 1000))).toBeNull()
    expect(budget.take(one(1, 'full', 10))).toBe('session_bytes')
    const mixed = { projectId: 1, sessions: new Map([['full', 10], ['fresh', 10]]) }
    expect(budget.take(mixed)).toBeNull()
    expect(budget.take(one(1, 'fresh', 990))).toBeNull()
    expect(budget.take(one(1, 'fresh', 1))).toBe('session_bytes')
  })

  test("a project's bytes per UTC day: refused past the cap, counted again the next day", () => {
    let now = Date.UTC(2026, 0, 1, 23, 59)
    const budget = new RecordingBudget({ maxSessionBytes: 0, maxProjectDailyBytes: 1000 }, () => now)
    expect(budget.take(one(1, 'a', 700))).toBeNull()
    expect(budget.take(one(1, 'b', 301))).toBe('project_daily_bytes')
    expect(budget.take(one(1, 'b', 300))).toBeNull()
    expect(budget.take(one(2, 'c', 1000))).toBeNull() // each project its own
    expect(budget.take(one(1, 'd', 1))).toBe('project_daily_bytes')
    now += 60_000 // past midnight UTC
    expect(budget.take(one(1, 'd', 1000))).toBeNull()
  })

  test('0 is no cap', () => {
    const budget = new RecordingBudget({ maxSessionBytes: 0, maxProjectDailyBytes: 0 })
    for (let i = 0; i < 10; i++) expect(budget.take(one(1, 's', 2 ** 40))).toBeNull()
    expect(budget.trackedSessions).toBe(0)
  })

  test('giveBack returns what a request took (the log refused it)', () => {
    const budget = new RecordingBudget({ maxSessionBytes: 1000, maxProjectDailyBytes: 1500 })
    const cost = one(1, 's', 1000)
    expect(budget.take(cost)).toBeNull()
    budget.giveBack(cost)
    expect(budget.take(one(1, 's', 1000))).toBeNull()
    expect(budget.take(one(1, 't', 500))).toBeNull()
    expect(budget.take(one(1, 'u', 1))).toBe('project_daily_bytes')
  })

  test('the sessions remembered stay bounded: the least recently used is forgotten first', () => {
    const budget = new RecordingBudget({ maxSessionBytes: 100, maxProjectDailyBytes: 0, maxTrackedSessions: 1000 })
    expect(budget.take(one(1, 'kept', 100))).toBeNull()
    for (let i = 0; i < 100_000; i++) {
      budget.take(one(1, `tiny-${i}`, 1))
      if (i % 200 === 0) expect(budget.take(one(1, 'kept', 1))).toBe('session_bytes') // still known: refused
    }
    expect(budget.trackedSessions).toBeLessThanOrEqual(1000)
    expect(budget.trackedSessions).toBeGreaterThanOrEqual(500)
    expect(budget.take(one(1, 'tiny-0', 100))).toBeNull() // forgotten long ago: counted from zero
  })

  test("a request's bytes are shared among its sessions by their events", () => {
    const cost = costOf(7, 1000, [
      { sessionId: 'a', events: [1, 2, 3] },
      { sessionId: 'b', events: [1] },
    ])
    expect(cost.projectId).toBe(7)
    expect(cost.sessions.get('a')).toBe(750)
    expect(cost.sessions.get('b')).toBe(250)
    expect(costOf(7, 1234, [{ sessionId: 'x', events: [1, 2] }]).sessions.get('x')).toBe(1234)
  })
})
