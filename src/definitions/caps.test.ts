import { describe, expect, test } from 'bun:test'
import { DefinitionCaps, withinRoom, type CappedKind } from './caps'

function caps(limit: number, stored: Map<number, number>) {
  const counted: number[] = []
  const refused: [number, CappedKind, number][] = []
  const c = new DefinitionCaps({
    limits: { event: limit, event_property: limit, person_property: limit, group_property: limit },
    count: async (teamId) => {
      counted.push(teamId)
      return stored.get(teamId) ?? 0
    },
    refused: (teamId, kind, n) => refused.push([teamId, kind, n]),
  })
  return { c, counted, refused }
}

describe('DefinitionCaps', () => {
  test('projects with room are written as usual; counted once, then bounded from memory', async () => {
    const { c, counted } = caps(10, new Map())
    const first = await c.split('event', [1, 1, 2].map((teamId) => ({ teamId })), (r) => r.teamId)
    expect(first.free).toHaveLength(3)
    expect(first.tight).toEqual([])
    await c.split('event', [{ teamId: 1 }], (r) => r.teamId)
    expect(counted).toEqual([1, 2])
  })

  test('a project whose bound would pass the cap is counted again, and given the room it has left', async () => {
    const stored = new Map([[1, 0]])
    const { c, counted, refused } = caps(10, stored)
    await c.split('event', Array.from({ length: 8 }, () => ({ teamId: 1 })), (r) => r.teamId) // bound 8
    stored.set(1, 6) // two of them existed already
    const { free, tight } = await c.split('event', Array.from({ length: 5 }, () => ({ teamId: 1 })), (r) => r.teamId)
    expect(counted).toEqual([1, 1])
    expect(free).toEqual([])
    expect(tight).toHaveLength(1)
    expect(tight[0].room).toBe(4)
    c.settle('event', 1, 4, 1)
    expect(refused).toEqual([[1, 'event', 1]])
  })

  test('withinRoom: every existing definition, then new ones up to the room', () => {
    const rows = ['a', 'new1', 'b', 'new2', 'new3']
    const { write, made, refused } = withinRoom(rows, 1, (r) => !r.startsWith('new'))
    expect(write).toEqual(['a', 'new1', 'b'])
    expect(made).toBe(1)
    expect(refused).toEqual(['new2', 'new3'])
  })
})
