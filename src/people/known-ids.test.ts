import { describe, expect, test } from 'bun:test'
import { KnownIds } from './known-ids'

describe('known distinct ids', () => {
  test('an id with a person, an id with a mapping row only, an unknown id; per project', () => {
    const known = new KnownIds(1024 * 1024)
    known.addPersons(1, ['user'])
    known.addMapped(1, ['anon', 'user'])
    expect(known.hasPerson(1, 'user')).toBe(true) // a mapping row learned later does not hide the person
    expect(known.mapped(1, 'user')).toBe(true)
    expect(known.hasPerson(1, 'anon')).toBe(false)
    expect(known.mapped(1, 'anon')).toBe(true)
    expect(known.mapped(2, 'anon')).toBe(false)
    expect(known.mapped(1, 'other')).toBe(false)
    known.addPersons(1, ['anon']) // identified later
    expect(known.hasPerson(1, 'anon')).toBe(true)
    expect(known.size).toBe(2)
  })

  test('bounded in bytes: a flood of new ids forgets the oldest, never passes the bound', () => {
    const max = 64 * 1024
    const known = new KnownIds(max)
    for (let i = 0; i < 50_000; i++) {
      known.addMapped(1, [`visitor-${i}-${'x'.repeat(i % 200)}`])
      if (known.bytes > max) throw new Error(`${known.bytes} bytes after ${i} ids`)
    }
    expect(known.bytes).toBeGreaterThan(max / 2)
    expect(known.size).toBeLessThan(400)
    expect(known.mapped(1, `visitor-49999-${'x'.repeat(49_999 % 200)}`)).toBe(true)
    expect(known.mapped(1, 'visitor-0-')).toBe(false)
    // an id larger than the whole bound is not kept (and flushes nothing)
    const before = known.size
    known.addPersons(1, ['y'.repeat(max)])
    expect(known.size).toBe(before)
  })

  test('forgetting ids, a project, everything; the bytes follow', () => {
    const known = new KnownIds(1024 * 1024)
    known.addPersons(1, ['a', 'b'])
    known.addMapped(2, ['a', 'c'])
    const full = known.bytes
    known.forget(1, ['a'])
    expect(known.mapped(1, 'a')).toBe(false)
    expect(known.hasPerson(1, 'b')).toBe(true)
    expect(known.bytes).toBeLessThan(full)
    known.forget(2)
    expect(known.mapped(2, 'a') || known.mapped(2, 'c')).toBe(false)
    expect(known.mapped(1, 'b')).toBe(true)
    known.forget(undefined)
    expect(known.size).toBe(0)
    expect(known.bytes).toBe(0)
  })
})
