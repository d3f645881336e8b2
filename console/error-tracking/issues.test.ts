import { describe, expect, test } from 'bun:test'
import { eventsOf, exceptionsOf, frameWhere, issueOf, MAX_FRAMES, MAX_MERGED, rangeOf, sparklinePoints, toggled, volumeOf } from './issues'

describe('issues as the list and the page read them', () => {
  test('figures flat or under aggregations; a volume as numbers or buckets', () => {
    const flat = issueOf({ id: 'u1', name: 'TypeError', description: 'x is undefined', status: 'active', occurrences: 3, users: 2, sessions: 1, last_seen: '2026-12-01T00:00:00Z', volume: [0, 1, 2] })
    expect(flat).toMatchObject({ id: 'u1', occurrences: 3, users: 2, sessions: 1, volume: [0, 1, 2] })
    const nested = issueOf({ id: 'u2', name: null, status: 'resolved', aggregations: { occurrences: 5, users: '4', sessions: 2, volumeRange: [1, 4] } })
    expect(nested).toMatchObject({ name: 'Unnamed error', status: 'resolved', occurrences: 5, users: 4, volume: [1, 4] })
    expect(volumeOf({ aggregations: { volume_buckets: [{ label: 'a', value: 2 }, { label: 'b', value: 'x' }] } })).toEqual([2, 0])
    expect(volumeOf({ volume: new Array(1000).fill(1) })).toHaveLength(366)
  })

  test("posthog-js's exception list: frames turned around (thrown first), raw and resolved frames, in-app marked", () => {
    const { exceptions } = exceptionsOf({
      $exception_list: JSON.stringify([
        {
          type: 'TypeError',
          value: "Cannot read properties of undefined (reading 'x')",
          mechanism: { handled: false },
          stacktrace: {
            type: 'raw',
            frames: [
              { filename: 'https://cdn.example.com/vendor.js', function: 'dispatch', lineno: 10, colno: 2, in_app: false },
              { source: 'src/app.ts', resolved_name: 'onClick', line: 1, column: 5123, in_app: true },
            ],
          },
        },
        { type: 'Error', value: 'cause', mechanism: { handled: true } },
      ]),
    })
    expect(exceptions).toHaveLength(2)
    expect(exceptions[0]).toEqual({
      type: 'TypeError',
      value: "Cannot read properties of undefined (reading 'x')",
      handled: false,
      frames: [
        { fn: 'onClick', file: 'src/app.ts', line: 1, column: 5123, inApp: true },
        { fn: 'dispatch', file: 'https://cdn.example.com/vendor.js', line: 10, column: 2, inApp: false },
      ],
    })
    expect(exceptions[1]!.frames).toEqual([])
    expect(frameWhere(exceptions[0]!.frames[0]!)).toBe('src/app.ts:1:5123')
  })

  test('the older flat shape, garbage, and a stack deeper than is shown', () => {
    expect(exceptionsOf({ $exception_type: 'Error', $exception_message: 'boom' }).exceptions).toEqual([{ type: 'Error', value: 'boom', handled: null, frames: [] }])
    expect(exceptionsOf({ $exception_list: '{not json' }).exceptions).toEqual([])
    expect(exceptionsOf({ $exception_list: [null, 5, { stacktrace: { frames: [null, 'x'] } }] }).exceptions).toEqual([{ type: 'Error', value: '', handled: null, frames: [] }])
    const deep = exceptionsOf({ $exception_list: [{ type: 'RangeError', stacktrace: { frames: Array.from({ length: MAX_FRAMES + 50 }, (_, i) => ({ function: `f${i}` })) } }] })
    expect(deep.exceptions[0]!.frames).toHaveLength(MAX_FRAMES)
    expect(deep.exceptions[0]!.frames[0]!.fn).toBe(`f${MAX_FRAMES + 49}`)
    expect(deep.framesLeftOut).toBe(50)
  })

  test('sparkline points: the highest day at the top, a flat line for none', () => {
    expect(sparklinePoints([0, 2, 1], 100, 20)).toBe('0,20 50,0 100,10')
    expect(sparklinePoints([0, 0], 100, 20)).toBe('0,20 100,20')
    expect(sparklinePoints([], 100, 20)).toBe('')
  })

  test("the issue's events and the range from a link, read leniently", () => {
    expect(eventsOf({ events: [null, { uuid: 'e1', distinct_id: 'd', timestamp: 't', properties: { $current_url: 'u' } }, { uuid: 'e2', properties: 'x' }] })).toEqual([
      { uuid: 'e1', distinct_id: 'd', timestamp: 't', properties: { $current_url: 'u' } },
      { uuid: 'e2', distinct_id: '', timestamp: '', properties: {} },
    ])
    expect(eventsOf({})).toEqual([])
    expect(rangeOf('-30d')).toBe('-30d')
    expect(rangeOf('-1000d')).toBe('-7d')
    expect(rangeOf(null)).toBe('-7d')
  })
})

describe('selecting issues to merge', () => {
  test('the order of selection is kept (the first is merged into); a second click takes one out; past the bound nothing is added', () => {
    expect(toggled(toggled(toggled([], 'b'), 'a'), 'c')).toEqual(['b', 'a', 'c'])
    expect(toggled(['b', 'a', 'c'], 'a')).toEqual(['b', 'c'])
    const full = Array.from({ length: MAX_MERGED + 1 }, (_, i) => `i${i}`)
    expect(toggled(full, 'one more')).toBe(full)
    expect(toggled(full, 'i3')).toHaveLength(MAX_MERGED)
  })
})
