import { describe, expect, test } from 'bun:test'
import type { CapturedEvent } from '../capture/normalize'
import { RecentUuids } from './recent-uuids'
import type { LoggedRecord } from './ring'

const event = (uuid: string, name = 'e'): CapturedEvent => ({ uuid, event: name, distinctId: 'd', properties: {}, timestamp: 0 })
const record = (seq: number, events: CapturedEvent[], projectId = 1): LoggedRecord => ({
  seq,
  projectId,
  receivedAt: 0,
  size: 1,
  decodedSize: 1,
  dropped: new Map(),
  events,
})
const U1 = '00000000-0000-4000-8000-000000000001'
const U2 = '00000000-0000-4000-8000-000000000002'

describe('recent uuids', () => {
  test('a later record reusing a uuid in the same project loses its event, counted as duplicate_uuid', () => {
    const recent = new RecentUuids()
    expect(recent.filter(record(1, [event(U1, 'first')])).events.map((e) => e.event)).toEqual(['first'])
    const second = recent.filter(record(2, [event(U1, 'second'), event(U2)]))
    expect(second.events.map((e) => e.uuid)).toEqual([U2])
    expect(second.dropped.get('duplicate_uuid')).toBe(1)
  })

  test('the same uuid twice in one request: the first event keeps it', () => {
    const out = new RecentUuids().filter(record(1, [event(U1, 'a'), event(U1, 'b')]))
    expect(out.events.map((e) => e.event)).toEqual(['a'])
    expect(out.dropped.get('duplicate_uuid')).toBe(1)
  })

  test('decoding the same record again (a retry, a ring miss) gives the same answer, for every consumer', () => {
    const recent = new RecentUuids()
    recent.filter(record(1, [event(U1)]))
    recent.filter(record(2, [event(U1)]))
    expect(recent.filter(record(1, [event(U1)])).events).toHaveLength(1)
    expect(recent.filter(record(2, [event(U1)])).events).toHaveLength(0)
  })

  test('projects do not share uuids', () => {
    const recent = new RecentUuids()
    recent.filter(record(1, [event(U1)], 1))
    expect(recent.filter(record(2, [event(U1)], 2)).events).toHaveLength(1)
  })

  test('bounded: a uuid is remembered for at least one generation, then forgotten', () => {
    const recent = new RecentUuids(2)
    recent.filter(record(1, [event(U1)]))
    recent.filter(record(2, [event(U2)]))
    recent.filter(record(3, [event('00000000-0000-4000-8000-000000000003')])) // rotates: U1, U2 now previous
    expect(recent.filter(record(4, [event(U1)])).events).toHaveLength(0)
    for (let i = 10; i < 16; i++) recent.filter(record(i, [event(`00000000-0000-4000-8000-0000000000${i}`)]))
    expect(recent.filter(record(20, [event(U1)])).events).toHaveLength(1)
  })

  test('a uuid repeated within a record is dropped even when the window turns, or forgets it, in between', () => {
    const U3 = '00000000-0000-4000-8000-000000000003'
    const first = new RecentUuids(1).filter(record(1, [event(U1, 'a'), event(U2), event(U3), event(U1, 'b')]))
    expect(first.events.map((e) => e.uuid)).toEqual([U1, U2, U3])
    expect(first.dropped.get('duplicate_uuid')).toBe(1)
    const recent = new RecentUuids(2)
    const events = [event(U1, 'a'), event(U2), event(U3), event(U1, 'b'), event(U2)]
    expect(recent.filter(record(1, events)).events.map((e) => e.event)).toEqual(['a', 'e', 'e'])
    // decoded again: the same answer
    expect(recent.filter(record(1, events)).events.map((e) => e.event)).toEqual(['a', 'e', 'e'])
  })
})
