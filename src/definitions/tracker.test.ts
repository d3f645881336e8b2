import { describe, expect, test } from 'bun:test'
import { DefinitionTracker } from './tracker'

const HOUR = 3_600_000
const at = (h: number, m = 0) => Date.UTC(2024, 0, 1, h, m)

describe('definition tracker', () => {
  test('writes a name once per batch, at its latest sighting', () => {
    const t = new DefinitionTracker()
    expect(t.due([{ teamId: 1, name: 'a', seenAt: at(1) }, { teamId: 1, name: 'a', seenAt: at(1, 30) }, { teamId: 2, name: 'a', seenAt: at(1) }])).toEqual([
      { teamId: 1, name: 'a', seenAt: at(1, 30) },
      { teamId: 2, name: 'a', seenAt: at(1) },
    ])
  })

  test('a hot name is written at most once an hour', () => {
    const t = new DefinitionTracker()
    t.remember(t.due([{ teamId: 1, name: 'hot', seenAt: at(1, 5) }]))
    expect(t.due([{ teamId: 1, name: 'hot', seenAt: at(1, 55) }])).toEqual([])
    expect(t.due([{ teamId: 1, name: 'hot', seenAt: at(1, 55) + HOUR }])).toHaveLength(1)
  })

  test('skips $$plugin_metrics and names over 200 bytes', () => {
    expect(new DefinitionTracker().due([{ teamId: 1, name: '$$plugin_metrics', seenAt: 0 }, { teamId: 1, name: 'é'.repeat(101), seenAt: 0 }])).toEqual([])
  })

  test('is bounded: a forgotten name is written again', () => {
    const t = new DefinitionTracker(2)
    t.remember(t.due(['a', 'b', 'c'].map((name) => ({ teamId: 1, name, seenAt: at(1) }))))
    expect(t.due([{ teamId: 1, name: 'a', seenAt: at(1) }])).toHaveLength(1)
    expect(t.due([{ teamId: 1, name: 'c', seenAt: at(1) }])).toHaveLength(0)
  })
})
