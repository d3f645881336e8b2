import { describe, expect, test } from 'bun:test'
import { MAX_KEYS_PER_EVENT, MAX_PLANNED_PER_BATCH, PropertyTracker } from './property-tracker'

const NOW = Date.UTC(2025, 5, 15, 12)
const HOUR = 3_600_000
const brief = (t: PropertyTracker, events: [string, Record<string, unknown>][], at = NOW) => {
  const batch = t.batch(NOW)
  for (const [event, properties] of events) batch.add(1, at, event, properties)
  return {
    batch,
    definitions: batch.definitions().map((d) => `${d.kind}${d.groupType ? `:${d.groupType}` : ''}:${d.name}:${d.type}`),
    pairs: batch.pairs().map((p) => `${p.event}/${p.property}`),
  }
}
/** Learn and remember, as the learner does after a successful write. */
const learn = (t: PropertyTracker, events: [string, Record<string, unknown>][], at = NOW) => {
  const r = brief(t, events, at)
  t.remember(r.batch.definitions(), r.batch.pairs())
  return r
}

describe('what ingestion teaches about properties', () => {
  test('top-level keys are event properties (not $set, $set_once, $unset, $groups, $group_N); pairs for each', () => {
    const r = brief(new PropertyTracker(), [
      ['$pageview', { plan: 'pro', price: 3, $set: { email: 'a@b.c' }, $set_once: { first: true }, $unset: ['x'], $groups: { company: 'c' }, $group_0: 'c', $group_4: 'd' }],
    ])
    expect(r.definitions).toEqual(['event:plan:String', 'event:price:Numeric', 'person:email:String', 'person:first:Boolean'])
    expect(r.pairs).toEqual(['$pageview/plan', '$pageview/price'])
  })

  test('$set keys teach person properties on any event, but not on personless ones', () => {
    expect(brief(new PropertyTracker(), [['clicked', { $set: { tier: 'gold' } }]]).definitions).toEqual(['person:tier:String'])
    expect(brief(new PropertyTracker(), [['clicked', { $process_person_profile: false, $set: { tier: 'gold' } }]]).definitions).toEqual(['event:$process_person_profile:Boolean'])
  })

  test('$groupidentify teaches only its $group_set keys, as properties of its group type', () => {
    const r = brief(new PropertyTracker(), [['$groupidentify', { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 10, name: 'Acme' }, $set: { nope: 1 } }]])
    expect(r.definitions).toEqual(['group:company:seats:Numeric', 'group:company:name:String'])
    expect(r.pairs).toEqual([])
    expect(brief(new PropertyTracker(), [['$groupidentify', { $group_key: 'acme', $group_set: { seats: 10 } }]]).definitions).toEqual([])
  })

  test('names and keys over 200 bytes, $$plugin_metrics, and events with too many keys teach nothing', () => {
    const long = 'é'.repeat(101) // 202 bytes
    expect(brief(new PropertyTracker(), [['e', { [long]: 1, ['x'.repeat(200)]: 1 }]]).definitions).toEqual(['event:' + 'x'.repeat(200) + ':Numeric'])
    expect(brief(new PropertyTracker(), [[long, { a: 1 }]]).definitions).toEqual([])
    expect(brief(new PropertyTracker(), [['$$plugin_metrics', { a: 1 }]]).definitions).toEqual([])
    const many = Object.fromEntries(Array.from({ length: MAX_KEYS_PER_EVENT + 1 }, (_, i) => [`k${i}`, i]))
    expect(brief(new PropertyTracker(), [['e', many]]).definitions).toEqual([])
  })

  test('in a batch, each key is written once, with its first non-null type', () => {
    const r = brief(new PropertyTracker(), [
      ['e', { a: null, b: 'x' }],
      ['e', { a: 5, b: 6 }],
      ['f', { a: 'text' }],
    ])
    expect(r.definitions).toEqual(['event:a:Numeric', 'event:b:String'])
    expect(r.pairs).toEqual(['e/a', 'e/b', 'f/a'])
  })

  test('a typed key is not written again within the hour; an untyped one is, as soon as a value gives it a type', () => {
    const t = new PropertyTracker()
    learn(t, [['e', { typed: 1, untyped: null }]])
    expect(brief(t, [['e', { typed: 'now a string', untyped: { still: 'no type' } }]]).definitions).toEqual([])
    const filled = learn(t, [['e', { untyped: 'finally' }]])
    expect(filled.definitions).toEqual(['event:untyped:String'])
    expect(brief(t, [['e', { untyped: 3 }]]).definitions).toEqual([])
  })

  test('every key is written again the next hour (so a deleted definition comes back)', () => {
    const t = new PropertyTracker()
    learn(t, [['e', { a: 1 }]])
    expect(brief(t, [['e', { a: 1 }]], NOW + 10 * 60_000).definitions).toEqual([])
    const next = brief(t, [['e', { a: 1 }]], NOW + HOUR)
    expect(next.definitions).toEqual(['event:a:Numeric'])
    expect(next.pairs).toEqual(['e/a'])
  })

  test('identical events after a settled one are passed over, yet a new key, a new hour or a still untyped key teaches', () => {
    const t = new PropertyTracker()
    learn(t, [['e', { a: 'x', b: 1, u: null }]])
    const batch = t.batch(NOW)
    for (let i = 0; i < 3; i++) batch.add(1, NOW, 'e', { a: `v${i}`, b: i })
    batch.add(1, NOW, 'e', { a: 'x', b: 1, c: true })
    batch.add(1, NOW, 'e', { a: 'x', b: 1, u: null })
    batch.add(1, NOW, 'e', { a: 'x', b: 1, u: 'typed at last' })
    batch.add(1, NOW + HOUR, 'e', { a: 'x', b: 1 })
    expect(batch.definitions().map((d) => `${d.name}:${d.type}:${d.hour - Math.floor(NOW / HOUR)}`)).toEqual(['c:Boolean:0', 'u:String:0', 'a:String:1', 'b:Numeric:1'])
    expect(batch.pairs().map((p) => `${p.property}:${p.hour - Math.floor(NOW / HOUR)}`)).toEqual(['c:0', 'a:1', 'b:1'])
  })

  test('a write that was not remembered (it failed) is tried again', () => {
    const t = new PropertyTracker()
    brief(t, [['e', { a: 1 }]])
    expect(brief(t, [['e', { a: 1 }]]).definitions).toEqual(['event:a:Numeric'])
  })

  test('projects, kinds and group types are apart', () => {
    const t = new PropertyTracker()
    const batch = t.batch(NOW)
    batch.add(1, NOW, 'e', { a: 1, $set: { a: 1 } })
    batch.add(2, NOW, 'e', { a: 1 })
    batch.add(1, NOW, '$groupidentify', { $group_type: 'company', $group_set: { a: 1 } })
    batch.add(1, NOW, '$groupidentify', { $group_type: 'team', $group_set: { a: 1 } })
    expect(batch.definitions().map((d) => `${d.teamId}:${d.kind}:${d.groupType}`)).toEqual(['1:event:null', '1:person:null', '2:event:null', '1:group:company', '1:group:team'])
  })

  test('the memo is bounded in bytes: what it forgot is written again, what it holds is not', () => {
    const t = new PropertyTracker(20_000)
    for (let i = 0; i < 500; i++) learn(t, [['e', { [`key_${i}`]: 1 }]])
    expect(brief(t, [['e', { key_0: 1 }]]).definitions).toEqual(['event:key_0:Numeric'])
    expect(brief(t, [['e', { key_499: 1 }]]).definitions).toEqual([])
  })
})

test('a batch plans a bounded number of writes; what it left out is planned by the next one', () => {
  const t = new PropertyTracker()
  const wide = (from: number) => Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${from + i}`, 1]))
  const batch = t.batch(NOW)
  for (let i = 0; i < 30; i++) batch.add(1, NOW, 'e', wide(i * 5000)) // 150,000 keys: definitions and pairs
  expect(batch.definitions().length + batch.pairs().length).toBe(MAX_PLANNED_PER_BATCH)
  t.remember(batch.definitions(), batch.pairs())
  const next = t.batch(NOW)
  next.add(1, NOW, 'e', wide(145_000))
  expect(next.definitions().map((d) => d.name)).toContain('k149999')
})
