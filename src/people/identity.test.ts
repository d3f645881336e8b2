import { describe, expect, test } from 'bun:test'
import { applyPropertyUpdates, IdentityModel, isIllegalDistinctId, MAX_PERSON_PROPERTIES_SIZE, personUuid, type Person, type PersonEvent } from './identity'

const ev = (event: string, distinctId: string, properties: Record<string, unknown> = {}, timestamp = 1000): PersonEvent => ({
  event,
  distinctId,
  properties,
  timestamp,
})

function stored(id: number, distinctIds: string[], properties: Record<string, unknown> = {}, isIdentified = false, createdAt = 500): Person {
  return { id, uuid: `uuid-${id}`, properties, isIdentified, createdAt, distinctIds: new Set(distinctIds), changed: false }
}

describe('person uuids', () => {
  test('are PostHog’s UUIDv5 of "team:distinct_id"', () => {
    const a = personUuid(1, 'user-1')
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(personUuid(1, 'user-1')).toBe(a)
    expect(personUuid(2, 'user-1')).not.toBe(a)
  })
})

describe('illegal distinct ids', () => {
  test('PostHog’s lists, case-insensitive and exact, quoted forms included', () => {
    for (const id of ['anonymous', 'Anonymous', 'GUEST', 'distinct_id', 'email', 'undefined', 'true', 'FALSE', '"anonymous"', "'guest'", '[object Object]', 'NaN', 'None', 'null', '0', '', '   ']) {
      expect({ id, illegal: isIllegalDistinctId(id) }).toEqual({ id, illegal: true })
    }
    for (const id of ['NULL', 'nan', 'user-1', '00', 'anon']) expect({ id, illegal: isIllegalDistinctId(id) }).toEqual({ id, illegal: false })
  })
})

describe('$identify', () => {
  test('links the anonymous id to the identified one in one identified person', () => {
    const model = new IdentityModel(1, [])
    model.apply(ev('$pageview', 'anon-1'))
    model.apply(ev('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { email: 'a@b.c' } }))
    const person = model.personOf('user-1')!
    expect(person).toBe(model.personOf('anon-1')!)
    expect([...person.distinctIds].sort()).toEqual(['anon-1', 'user-1'])
    expect(person.isIdentified).toBe(true)
    expect(person.properties).toEqual({ email: 'a@b.c' })
    expect(person.uuid).toBe(personUuid(1, 'anon-1')) // the first person keeps its uuid
  })

  test('neither id known: one new person for both, named after the identified id', () => {
    const model = new IdentityModel(7, [])
    model.apply(ev('$identify', 'user-1', { $anon_distinct_id: 'anon-1' }))
    expect(model.personOf('anon-1')!.uuid).toBe(personUuid(7, 'user-1'))
    expect(model.touched()).toHaveLength(1)
  })

  test('two persons merge: the identified person’s properties win, then the event’s $set and $set_once apply', () => {
    const anon = stored(1, ['anon-1'], { plan: 'free', seen: 'anon', first_touch: 'ad' }, false, 100)
    const user = stored(2, ['user-1'], { plan: 'pro', email: 'a@b.c' }, false, 300)
    const model = new IdentityModel(1, [anon, user])
    model.apply(ev('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { name: 'A' }, $set_once: { first_touch: 'organic', new_once: 1 } }))
    const person = model.personOf('anon-1')!
    expect(person).toBe(user)
    expect(person.properties).toEqual({ plan: 'pro', seen: 'anon', first_touch: 'ad', email: 'a@b.c', name: 'A', new_once: 1 })
    expect(person.createdAt).toBe(100)
    expect(anon.mergedInto).toBe(user)
    const touched = model.touched()
    expect(touched).toContain(anon)
    expect(touched).toContain(user)
    expect(model.assignments().map(([id]) => id)).toEqual(['anon-1'])
  })

  test('an already identified person is not merged into another', () => {
    const other = stored(1, ['user-a'], {}, true)
    const into = stored(2, ['user-b'])
    const model = new IdentityModel(1, [other, into])
    model.apply(ev('$identify', 'user-b', { $anon_distinct_id: 'user-a' }))
    expect(model.personOf('user-a')).toBe(other)
    expect(other.mergedInto).toBeUndefined()
    expect(into.isIdentified).toBe(true)
  })

  test('$merge_dangerously merges even an identified person', () => {
    const other = stored(1, ['user-a'], { x: 1 }, true)
    const into = stored(2, ['user-b'])
    const model = new IdentityModel(1, [other, into])
    model.apply(ev('$merge_dangerously', 'user-b', { alias: 'user-a' }))
    expect(model.personOf('user-a')).toBe(into)
    expect(into.properties).toEqual({ x: 1 })
  })

  test('illegal ids never merge, but the event still updates its person', () => {
    const model = new IdentityModel(1, [])
    model.apply(ev('$identify', 'user-1', { $anon_distinct_id: 'anonymous', $set: { email: 'x' } }))
    expect(model.personOf('anonymous')).toBeUndefined()
    expect(model.personOf('user-1')!.properties).toEqual({ email: 'x' })
    model.apply(ev('$create_alias', 'null', { alias: 'user-1' }))
    expect(model.personOf('user-1')!.distinctIds.has('null')).toBe(false)
  })
})

describe('$create_alias', () => {
  test('adds the alias to the person of distinct_id', () => {
    const user = stored(5, ['user-1'])
    const model = new IdentityModel(1, [user])
    model.apply(ev('$create_alias', 'user-1', { alias: 'user@example.com' }))
    expect(model.personOf('user@example.com')).toBe(user)
    expect(model.assignments().map(([id]) => id)).toEqual(['user@example.com'])
  })
})

describe('properties', () => {
  test('$set overwrites, $set_once fills only missing keys, $unset removes (array or object)', () => {
    const p: Record<string, unknown> = { a: 1, b: 2, c: 3 }
    expect(applyPropertyUpdates(p, { $set: { a: 10 }, $set_once: { a: 99, d: 4 }, $unset: ['b'] })).toBe(true)
    expect(p).toEqual({ a: 10, c: 3, d: 4 })
    expect(applyPropertyUpdates(p, { $unset: { c: null } })).toBe(true)
    expect(p).toEqual({ a: 10, d: 4 })
    expect(applyPropertyUpdates(p, { $set: { a: 10 }, $set_once: { d: 0 } })).toBe(false)
  })

  test('$groupidentify, $exception and personless events never touch persons', () => {
    const model = new IdentityModel(1, [])
    expect(model.apply(ev('$groupidentify', 'setup', { $set: { a: 1 } }))).toBe(false)
    expect(model.apply(ev('$exception', 'u'))).toBe(false)
    expect(model.apply(ev('$pageview', 'u', { $process_person_profile: false, $set: { a: 1 } }))).toBe(false)
    expect(model.touched()).toEqual([])
  })

  test('any event creates its person, unidentified', () => {
    const model = new IdentityModel(1, [])
    model.apply(ev('$pageview', 'visitor'))
    expect(model.personOf('visitor')).toMatchObject({ isIdentified: false, properties: {} })
  })
})

describe('property names that are special in JavaScript objects', () => {
  test('__proto__, constructor, toString, hasOwnProperty, valueOf are ordinary keys for $set, $set_once and $unset', () => {
    const target: Record<string, unknown> = {}
    const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']
    const setOnce = JSON.parse(`{${names.map((n) => `"${n}": "once-${n}"`).join(',')}}`)
    expect(applyPropertyUpdates(target, { $set_once: setOnce })).toBe(true)
    for (const n of names) expect(Object.getOwnPropertyDescriptor(target, n)?.value).toBe(`once-${n}`)
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype)
    // an injected __proto__ object must not make later $set_once keys look present
    const injected: Record<string, unknown> = {}
    applyPropertyUpdates(injected, { $set: JSON.parse('{"__proto__": {"plan": "free"}}') })
    applyPropertyUpdates(injected, { $set_once: { plan: 'pro' } })
    expect(Object.hasOwn(injected, 'plan')).toBe(true)
    expect(injected.plan).toBe('pro')
    expect(JSON.parse(JSON.stringify(injected))).toEqual(JSON.parse('{"__proto__": {"plan": "free"}, "plan": "pro"}'))
    applyPropertyUpdates(target, { $unset: ['constructor'] })
    expect(Object.hasOwn(target, 'constructor')).toBe(false)
  })
})

describe('the person properties size limit', () => {
  const chunk = (n: number) => 'x'.repeat(n)
  test('a $set that would take a person past the limit is dropped and counted; the person and smaller updates stay', () => {
    const model = new IdentityModel(1, [stored(1, ['u'], { plan: 'free' })])
    model.apply(ev('$set', 'u', { $set: { a: chunk(MAX_PERSON_PROPERTIES_SIZE / 2) } }))
    model.apply(ev('$set', 'u', { $set: { b: chunk(MAX_PERSON_PROPERTIES_SIZE / 2) } }))
    model.apply(ev('$set', 'u', { $set: { plan: 'pro' } }))
    const p = model.personOf('u')!
    expect(Object.keys(p.properties).sort()).toEqual(['a', 'plan'])
    expect(p.properties.plan).toBe('pro')
    expect(model.droppedTooLarge).toBe(1)
    // overwriting a large value with another of the same size fits: the limit is measured, not guessed
    model.apply(ev('$set', 'u', { $set: { a: chunk(MAX_PERSON_PROPERTIES_SIZE / 2 - 10) } }))
    expect(model.droppedTooLarge).toBe(1)
    expect((p.properties.a as string).length).toBe(MAX_PERSON_PROPERTIES_SIZE / 2 - 10)
    expect(JSON.stringify(p.properties).length).toBeLessThanOrEqual(MAX_PERSON_PROPERTIES_SIZE)
  })
  test('eight 4 MB $sets leave the person under the limit', () => {
    const model = new IdentityModel(1, [])
    for (let i = 0; i < 8; i++) model.apply(ev('$set', 'v', { $set: { [`k${i}`]: chunk(4 * 1024 * 1024) } }))
    model.apply(ev('$set', 'v', { $set: { small: 1 } }))
    expect(model.personOf('v')!.properties).toEqual({ small: 1 })
    expect(model.droppedTooLarge).toBe(8)
  })
})
