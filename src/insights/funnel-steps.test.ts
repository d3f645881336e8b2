// Vectors for one person's funnel: restarts, strict breaks, unordered steps, exclusions voiding an attempt, the
// window's edge, and the conversion times and histogram built from attempts.
import { describe, expect, test } from 'bun:test'
import { attemptsOf, bestAttempt, histogram, median, secondsBetween, windowDeadline, type FunnelEvent, type FunnelOrder, type FunnelRules } from './funnel-steps'

const T0 = Date.UTC(2024, 0, 31, 12)
const MIN = 60_000
const STEPS = ['A', 'B', 'C']

/** `['A', 0], ['B', 5]`: events by name and minute; `X` is the exclusion event, anything else matches nothing. */
function events(...list: [string, number, string?][]): FunnelEvent[] {
  return list.map(([name, minute, breakdown]) => ({
    at: T0 + minute * MIN,
    steps: STEPS.reduce((mask, s, i) => (s === name ? mask | (1 << i) : mask), 0),
    exclusions: name === 'X' ? 1 : 0,
    breakdown: breakdown ?? null,
  }))
}

function rules(order: FunnelOrder, options: { windowMinutes?: number; exclusion?: [number, number] } = {}): FunnelRules {
  return {
    order,
    stepCount: STEPS.length,
    exclusions: options.exclusion ? [{ fromStep: options.exclusion[0], toStep: options.exclusion[1] }] : [],
    deadline: windowDeadline(options.windowMinutes ?? 60, 'minute'),
  }
}

/** How far the person got and the minutes of each step of the attempt that counts. */
function best(list: FunnelEvent[], r: FunnelRules): { reached: number; minutes: number[] } {
  const a = bestAttempt(attemptsOf(list, r))
  return a === null ? { reached: 0, minutes: [] } : { reached: a.at.length, minutes: a.at.map((t) => (t - T0) / MIN) }
}

describe('ordered', () => {
  test('steps in order; out of order steps wait for their turn', () => {
    expect(best(events(['A', 0], ['B', 5], ['C', 10]), rules('ordered'))).toEqual({ reached: 3, minutes: [0, 5, 10] })
    expect(best(events(['A', 0], ['C', 5], ['B', 10]), rules('ordered'))).toEqual({ reached: 2, minutes: [0, 10] })
    expect(best(events(['B', 0], ['C', 5]), rules('ordered'))).toEqual({ reached: 0, minutes: [] })
  })

  test('a later first step restarts: times count from the latest A before B', () => {
    expect(best(events(['A', 0], ['A', 20], ['B', 25]), rules('ordered'))).toEqual({ reached: 2, minutes: [20, 25] })
  })

  test('a restart does not lose an attempt already further on', () => {
    // A B (attempt 1 at step 1), A again (attempt 2 at step 0), C carries attempt 1 to the end
    expect(best(events(['A', 0], ['B', 5], ['A', 10], ['C', 15]), rules('ordered'))).toEqual({ reached: 3, minutes: [0, 5, 15] })
  })

  test('the window is measured from the first step, its edge included', () => {
    expect(best(events(['A', 0], ['B', 30], ['C', 60]), rules('ordered'))).toEqual({ reached: 3, minutes: [0, 30, 60] })
    expect(best(events(['A', 0], ['B', 30], ['C', 61]), rules('ordered'))).toEqual({ reached: 2, minutes: [0, 30] })
    // after the window ran out, a new A starts over and can finish
    expect(best(events(['A', 0], ['B', 30], ['A', 70], ['C', 80]), rules('ordered'))).toEqual({ reached: 2, minutes: [0, 30] })
    expect(best(events(['A', 0], ['A', 70], ['B', 80], ['C', 90]), rules('ordered'))).toEqual({ reached: 3, minutes: [70, 80, 90] })
  })

  test('one event moves an attempt by one step: a funnel of the same event twice needs two of them', () => {
    const twice: FunnelRules = { ...rules('ordered'), stepCount: 2 }
    const same = (minutes: number[]) => minutes.map((m) => ({ at: T0 + m * MIN, steps: 0b11, exclusions: 0, breakdown: null }))
    expect(bestAttempt(attemptsOf(same([0]), twice))!.at.length).toBe(1)
    expect(bestAttempt(attemptsOf(same([0, 5]), twice))!.at.length).toBe(2)
  })

  test('other events change nothing', () => {
    expect(best(events(['A', 0], ['other', 1], ['B', 2], ['other', 3], ['C', 4]), rules('ordered')).reached).toBe(3)
  })
})

describe('strict', () => {
  test('any other event between two steps breaks the attempt', () => {
    expect(best(events(['A', 0], ['B', 1], ['C', 2]), rules('strict')).reached).toBe(3)
    expect(best(events(['A', 0], ['other', 1], ['B', 2], ['C', 3]), rules('strict')).reached).toBe(1)
    expect(best(events(['A', 0], ['B', 1], ['other', 2], ['C', 3]), rules('strict')).reached).toBe(2)
    // a repeated step is another event too
    expect(best(events(['A', 0], ['B', 1], ['B', 2], ['C', 3]), rules('strict')).reached).toBe(2)
  })

  test('a fresh A after a break can go all the way', () => {
    expect(best(events(['A', 0], ['other', 1], ['A', 2], ['B', 3], ['C', 4]), rules('strict'))).toEqual({ reached: 3, minutes: [2, 3, 4] })
  })
})

describe('unordered', () => {
  test('steps in any order within the window from the first of them', () => {
    expect(best(events(['C', 0], ['A', 5], ['B', 10]), rules('unordered'))).toEqual({ reached: 3, minutes: [0, 5, 10] })
    expect(best(events(['B', 0], ['B', 5], ['A', 10]), rules('unordered'))).toEqual({ reached: 2, minutes: [0, 10] })
    expect(best(events(['C', 0], ['A', 50], ['B', 100]), rules('unordered'))).toEqual({ reached: 2, minutes: [0, 50] })
  })

  test('a later start can reach further', () => {
    expect(best(events(['C', 0], ['A', 70], ['B', 80], ['C', 90]), rules('unordered'))).toEqual({ reached: 3, minutes: [70, 80, 90] })
  })
})

describe('exclusions', () => {
  test('an exclusion between its from and to steps voids the attempt', () => {
    const r = rules('ordered', { exclusion: [0, 1] })
    expect(best(events(['A', 0], ['X', 1], ['B', 2], ['C', 3]), r).reached).toBe(0)
    // after the to step: nothing voided
    expect(best(events(['A', 0], ['B', 1], ['X', 2], ['C', 3]), r).reached).toBe(3)
    // before the from step: nothing voided
    expect(best(events(['X', 0], ['A', 1], ['B', 2], ['C', 3]), r).reached).toBe(3)
  })

  test('a voided attempt leaves a later one free to count', () => {
    expect(best(events(['A', 0], ['X', 1], ['A', 2], ['B', 3], ['C', 4]), rules('ordered', { exclusion: [0, 2] }))).toEqual({ reached: 3, minutes: [2, 3, 4] })
  })

  test('an exclusion past the window does not void the attempt it no longer belongs to', () => {
    expect(best(events(['A', 0], ['B', 10], ['X', 61]), rules('ordered', { exclusion: [1, 2] })).reached).toBe(2)
    expect(best(events(['A', 0], ['B', 10], ['X', 60]), rules('ordered', { exclusion: [1, 2] })).reached).toBe(0)
  })

  test('unordered and strict attempts are voided alike', () => {
    expect(best(events(['C', 0], ['X', 1], ['A', 2], ['B', 3]), rules('unordered', { exclusion: [0, 2] })).reached).toBe(2)
    expect(best(events(['C', 0], ['A', 1], ['B', 2], ['X', 3]), rules('unordered', { exclusion: [0, 2] })).reached).toBe(3)
    expect(best(events(['A', 0], ['B', 1], ['X', 2]), rules('strict', { exclusion: [1, 2] })).reached).toBe(0)
  })
})

describe('breakdown, times and windows', () => {
  test('first touch: the value of the attempt’s first step', () => {
    const a = bestAttempt(attemptsOf(events(['A', 0, 'Chrome'], ['B', 5, 'Firefox'], ['C', 10, 'Safari']), rules('ordered')))!
    expect(a.breakdown).toBe('Chrome')
    expect(secondsBetween(a, 0, 2)).toBe(600)
    expect(secondsBetween(a, 1, 2)).toBe(300)
    const partial = bestAttempt(attemptsOf(events(['A', 0]), rules('ordered')))!
    expect(secondsBetween(partial, 0, 1)).toBeNull()
  })

  test('of two attempts as far, the first to get there counts', () => {
    expect(best(events(['A', 0], ['B', 30], ['A', 40], ['B', 45]), rules('ordered'))).toEqual({ reached: 2, minutes: [0, 30] })
  })

  test('window units: calendar months clamp the day, weeks are 7 days', () => {
    const jan31 = Date.UTC(2024, 0, 31, 12)
    expect(new Date(windowDeadline(1, 'month')(jan31)).toISOString()).toBe('2024-02-29T12:00:00.000Z')
    expect(new Date(windowDeadline(13, 'month')(jan31)).toISOString()).toBe('2025-02-28T12:00:00.000Z')
    expect(windowDeadline(2, 'week')(0)).toBe(14 * 86_400_000)
    expect(windowDeadline(90, 'second')(0)).toBe(90_000)
  })

  test('median and histogram', () => {
    expect(median([])).toBeNull()
    expect(median([5, 1, 3])).toBe(3)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(histogram([])).toEqual([])
    // 6 values: 2 bins (cube root, rounded up) of 2700 s from 1800, and the empty bin after
    expect(histogram([1800, 3600, 3600, 3600, 3600, 7200])).toEqual([[1800, 5], [4500, 0], [7200, 1]])
    expect(histogram([10, 10], 3)).toEqual([[10, 2], [11, 0], [12, 0], [13, 0]])
    const many = histogram(Array.from({ length: 1_000_000 }, (_, i) => i))
    expect(many).toHaveLength(61)
    expect(many.reduce((n, [, c]) => n + c, 0)).toBe(1_000_000)
  })

  test('cost: one person with 100,000 events of 20 steps is counted in bounded time', () => {
    const stepCount = 20
    const list: FunnelEvent[] = Array.from({ length: 100_000 }, (_, i) => ({ at: T0 + i * 1000, steps: 1 << i % stepCount, exclusions: 0, breakdown: null }))
    for (const order of ['ordered', 'strict', 'unordered'] as const) {
      const started = performance.now()
      const attempts = attemptsOf(list, { order, stepCount, exclusions: [], deadline: windowDeadline(1, 'day') })
      console.log(`${order}: 100,000 events × 20 steps in ${(performance.now() - started).toFixed(0)} ms, ${attempts.length} attempts`)
      expect(bestAttempt(attempts)!.at.length).toBe(stepCount)
    }
  })
})
