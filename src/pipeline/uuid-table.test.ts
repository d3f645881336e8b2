import { describe, expect, test } from 'bun:test'
import { UuidKey, UuidTable } from './uuid-table'

const uuids = (n: number) => Array.from({ length: n }, () => crypto.randomUUID())

describe('the table of recent uuids', () => {
  test('holds each (project, uuid) with its sequence number; other projects and other uuids are not found', () => {
    const table = new UuidTable(1000)
    const key = new UuidKey()
    const held = uuids(1000)
    held.forEach((u, i) => table.set(key.read(7, u), i + 1))
    expect(table.size).toBe(1000)
    held.forEach((u, i) => expect(table.get(key.read(7, u))).toBe(i + 1))
    for (const u of held.slice(0, 50)) expect(table.get(key.read(8, u))).toBeUndefined()
    for (const u of uuids(50)) expect(table.get(key.read(7, u))).toBeUndefined()
  })

  test('text that is not a lower-case canonical uuid, and projects beyond 32 bits, are held as text, apart', () => {
    const table = new UuidTable(10)
    const key = new UuidKey()
    const u = crypto.randomUUID()
    table.set(key.read(1, u.toUpperCase()), 1)
    table.set(key.read(2 ** 40, u), 2)
    table.set(key.read(1, 'not-a-uuid'), 3)
    expect(table.get(key.read(1, u))).toBeUndefined()
    expect(table.get(key.read(1, u.toUpperCase()))).toBe(1)
    expect(table.get(key.read(2 ** 40, u))).toBe(2)
    expect(table.get(key.read(1, 'not-a-uuid'))).toBe(3)
    expect(table.get(key.read(1, `${u.slice(0, 35)}g`))).toBeUndefined()
  })

  test('keys that would sit too far from their slot go to a map: every one is still found', () => {
    const table = new UuidTable(2000, 1)
    const key = new UuidKey()
    const held = uuids(2000)
    held.forEach((u, i) => table.set(key.read(1, u), i))
    held.forEach((u, i) => expect(table.get(key.read(1, u))).toBe(i))
    for (const u of uuids(100)) expect(table.get(key.read(1, u))).toBeUndefined()
  })
})
