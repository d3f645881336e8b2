import { describe, expect, test } from 'bun:test'
import { PersonCache, type StoredPropertiesLoader } from './person-cache'
import { decodePersonChange, encodePersonChange } from './person-changes'
import type { StoredPropertiesRequest } from './stored-properties'

/** A loader over an in-memory "database" that counts its reads and can be held. */
function fakeStore(
  persons: Record<string, Record<string, unknown>>,
  groups: Record<string, Record<string, unknown>> = {},
  memberships: Record<string, number[]> = {},
) {
  const reads: StoredPropertiesRequest[] = []
  let gate: Promise<void> | null = null
  const load: StoredPropertiesLoader = async (request) => {
    reads.push(request)
    const sized = (v: Record<string, unknown> | undefined) => (v ? { value: { ...v }, bytes: JSON.stringify(v).length * 2 } : { value: null, bytes: 0 })
    const person = request.distinctId === undefined ? undefined : { ...sized(persons[request.distinctId]), staticCohorts: new Set(memberships[request.distinctId] ?? []) }
    const out = { person, groups: new Map() }
    for (const [index, key] of request.groups ?? []) out.groups.set(index, sized(groups[`${index}:${key}`]))
    if (gate) await gate // the answer was read before the hold: what Postgres had when the query ran
    return out
  }
  return {
    persons,
    reads,
    load,
    hold() {
      let release!: () => void
      gate = new Promise((r) => (release = r))
      return () => {
        gate = null
        release()
      }
    },
  }
}

const options = { maxBytes: 1 << 20, ttlMs: 60_000 }

describe('person cache', () => {
  test('a second lookup is answered from memory; a change notice makes the next one read again', async () => {
    const store = fakeStore({ u: { plan: 'free' } })
    const outcomes: string[] = []
    const cache = new PersonCache(store.load, { ...options, onLookup: (o) => outcomes.push(o) })
    expect((await cache.get({ teamId: 1, distinctId: 'u' })).person).toEqual({ plan: 'free' })
    expect((await cache.get({ teamId: 1, distinctId: 'u' })).person).toEqual({ plan: 'free' })
    expect(store.reads).toHaveLength(1)
    expect(outcomes).toEqual(['miss', 'hit'])
    store.persons.u = { plan: 'pro' }
    cache.invalidate({ teamId: 1, distinctIds: ['u'], groups: [] })
    expect((await cache.get({ teamId: 1, distinctId: 'u' })).person).toEqual({ plan: 'pro' })
    expect(store.reads).toHaveLength(2)
  })

  test('a person comes with its static cohorts, from Postgres and from memory alike', async () => {
    const store = fakeStore({ u: { plan: 'pro' } }, {}, { u: [3, 7] })
    const cache = new PersonCache(store.load, options)
    expect([...(await cache.get({ teamId: 1, distinctId: 'u' })).staticCohorts!]).toEqual([3, 7])
    expect([...(await cache.get({ teamId: 1, distinctId: 'u' })).staticCohorts!]).toEqual([3, 7])
    expect(cache.cachedPerson(1, 'u')).toEqual({ properties: { plan: 'pro' }, staticCohorts: new Set([3, 7]) })
    expect(cache.cachedPerson(1, 'nobody')).toBeUndefined()
    expect(store.reads).toHaveLength(1)
  })

  test('no person is cached too (null), and projects do not share entries', async () => {
    const store = fakeStore({})
    const cache = new PersonCache(store.load, options)
    expect((await cache.get({ teamId: 1, distinctId: 'ghost' })).person).toBeNull()
    expect((await cache.get({ teamId: 1, distinctId: 'ghost' })).person).toBeNull()
    expect(store.reads).toHaveLength(1)
    await cache.get({ teamId: 2, distinctId: 'ghost' })
    expect(store.reads).toHaveLength(2)
  })

  test('groups are cached per (type index, key) and invalidated alike; only what is missing is read', async () => {
    const store = fakeStore({ u: { a: 1 } }, { '0:acme': { size: 10 }, '1:eu': { region: 'eu' } })
    const cache = new PersonCache(store.load, options)
    await cache.get({ teamId: 1, distinctId: 'u', groups: [[0, 'acme']] })
    const both = await cache.get({ teamId: 1, distinctId: 'u', groups: [[0, 'acme'], [1, 'eu']] })
    expect(both.person).toEqual({ a: 1 })
    expect([...both.groups]).toEqual([[0, { size: 10 }], [1, { region: 'eu' }]])
    expect(store.reads[1]).toEqual({ teamId: 1, distinctId: undefined, groups: [[1, 'eu']] })
    store.persons.u = { a: 2 }
    cache.invalidate({ teamId: 1, distinctIds: [], groups: [[0, 'acme']] })
    await cache.get({ teamId: 1, distinctId: 'u', groups: [[0, 'acme']] })
    expect(store.reads[2]).toEqual({ teamId: 1, distinctId: undefined, groups: [[0, 'acme']] })
  })

  test('concurrent misses for one person share one read', async () => {
    const store = fakeStore({ u: { plan: 'free' } })
    const cache = new PersonCache(store.load, options)
    const release = store.hold()
    const answers = Promise.all(Array.from({ length: 20 }, () => cache.get({ teamId: 1, distinctId: 'u' })))
    release()
    expect((await answers).every((a) => (a.person as any).plan === 'free')).toBe(true)
    expect(store.reads).toHaveLength(1)
  })

  test('a read in flight when its person changed answers its request but is not kept', async () => {
    const store = fakeStore({ u: { plan: 'free' } })
    const cache = new PersonCache(store.load, options)
    const release = store.hold()
    const inFlight = cache.get({ teamId: 1, distinctId: 'u' })
    await Bun.sleep(1)
    cache.invalidate({ teamId: 1, distinctIds: ['u'], groups: [] }) // the learner committed meanwhile
    store.persons.u = { plan: 'pro' }
    release()
    expect((await inFlight).person).toEqual({ plan: 'free' })
    expect((await cache.get({ teamId: 1, distinctId: 'u' })).person).toEqual({ plan: 'pro' })
  })

  test('a failed read is not cached and the next lookup tries again', async () => {
    let fail = true
    const store = fakeStore({ u: { ok: true } })
    const cache = new PersonCache(async (r) => {
      if (fail) throw new Error('postgres down')
      return store.load(r)
    }, options)
    await expect(cache.get({ teamId: 1, distinctId: 'u' })).rejects.toThrow('postgres down')
    fail = false
    expect((await cache.get({ teamId: 1, distinctId: 'u' })).person).toEqual({ ok: true })
  })

  test('bounded in bytes: the least recently used persons go first; one huge person is not kept', async () => {
    const persons: Record<string, Record<string, unknown>> = {}
    for (let i = 0; i < 100; i++) persons[`u${i}`] = { blob: 'x'.repeat(1000) }
    persons.huge = { blob: 'x'.repeat(100_000) }
    const store = fakeStore(persons)
    const cache = new PersonCache(store.load, { maxBytes: 50_000, ttlMs: 60_000 })
    for (let i = 0; i < 100; i++) {
      await cache.get({ teamId: 1, distinctId: `u${i}` })
      await cache.get({ teamId: 1, distinctId: 'u0' }) // kept hot
    }
    expect(cache.size.bytes).toBeLessThanOrEqual(50_000)
    const reads = store.reads.length
    await cache.get({ teamId: 1, distinctId: 'u0' })
    await cache.get({ teamId: 1, distinctId: 'u99' })
    expect(store.reads.length).toBe(reads) // the hot one and the newest stayed
    await cache.get({ teamId: 1, distinctId: 'u1' })
    expect(store.reads.length).toBe(reads + 1) // an old cold one was evicted
    await cache.get({ teamId: 1, distinctId: 'huge' })
    await cache.get({ teamId: 1, distinctId: 'huge' })
    expect(store.reads.length).toBe(reads + 3)
  })

  test('a person asked for now and then (not on every request) stays while strangers stream through', async () => {
    const persons: Record<string, Record<string, unknown>> = {}
    for (let i = 0; i < 300; i++) persons[`u${i}`] = { blob: 'x'.repeat(1000) }
    const store = fakeStore(persons)
    const cache = new PersonCache(store.load, { maxBytes: 50_000, ttlMs: 60_000 }) // about 23 persons
    await cache.get({ teamId: 1, distinctId: 'u0' })
    for (let i = 1; i < 300; i++) {
      await cache.get({ teamId: 1, distinctId: `u${i}` })
      if (i % 8 === 0) await cache.get({ teamId: 1, distinctId: 'u0' })
    }
    expect(store.reads.filter((r) => r.distinctId === 'u0')).toHaveLength(1)
    expect(cache.size.bytes).toBeLessThanOrEqual(50_000)
  })

  test('an entry older than the TTL is read again; limitTtl shortens it', async () => {
    const store = fakeStore({ u: { plan: 'free' } })
    const cache = new PersonCache(store.load, { maxBytes: 1 << 20, ttlMs: 60_000 })
    await cache.get({ teamId: 1, distinctId: 'u' })
    cache.limitTtl(20)
    await Bun.sleep(40)
    await cache.get({ teamId: 1, distinctId: 'u' })
    expect(store.reads).toHaveLength(2)
  })

  test('"all" forgets the whole project, clear() forgets everything', async () => {
    const store = fakeStore({ a: {}, b: {} })
    const cache = new PersonCache(store.load, options)
    for (const teamId of [1, 2]) for (const id of ['a', 'b']) await cache.get({ teamId, distinctId: id })
    cache.invalidate({ teamId: 1, distinctIds: [], groups: [], all: true })
    expect(cache.size.entries).toBe(2)
    cache.clear()
    expect(cache.size).toEqual({ entries: 0, bytes: 0 })
  })
})

describe('person change notices', () => {
  test('a change round-trips, split into payloads NOTIFY accepts', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `user-${i}-\u0000"quoted"`)
    const payloads = encodePersonChange({ teamId: 7, distinctIds: ids, groups: [[0, 'acme'], [4, 'é']] })
    expect(payloads.length).toBeGreaterThan(1)
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8000)
    const decoded = payloads.map((p) => decodePersonChange(p)!)
    expect(decoded.flatMap((c) => c.distinctIds)).toEqual(ids)
    expect(decoded.flatMap((c) => c.groups)).toEqual([[0, 'acme'], [4, 'é']])
    expect(decoded.every((c) => c.teamId === 7)).toBe(true)
  })

  test('a change too large to list becomes "forget the project"; junk is ignored', () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `a-rather-long-distinct-id-${i}`)
    expect(encodePersonChange({ teamId: 3, distinctIds: ids, groups: [] }).map(decodePersonChange)).toEqual([
      { teamId: 3, distinctIds: [], groups: [], all: true },
    ])
    expect(decodePersonChange('not json')).toBeNull()
    expect(decodePersonChange('{"t":"1"}')).toBeNull()
  })
})
