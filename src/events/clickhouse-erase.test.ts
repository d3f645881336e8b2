import { describe, expect, test } from 'bun:test'
import { decodePersonChange, encodePersonChange } from '../people/person-changes'
import { eraseMethod } from './clickhouse-erase'

describe('erasing events, by ClickHouse version', () => {
  test('lightweight DELETE from 23.3, a synchronous mutation from 20, a polled one on 18.16', () => {
    expect(eraseMethod('26.7.1.1')).toBe('lightweight_delete')
    expect(eraseMethod('23.3.2')).toBe('lightweight_delete')
    expect(eraseMethod('23.2.9')).toBe('mutation_sync')
    expect(eraseMethod('20.3.8.53')).toBe('mutation_sync')
    expect(eraseMethod('18.16.1')).toBe('mutation_polled')
  })

  test('an erasure travels to other processes marked as such (their learners forget the ids)', () => {
    const [payload] = encodePersonChange({ teamId: 3, distinctIds: ['a', 'b'], groups: [], deleted: true })
    expect(decodePersonChange(payload)).toEqual({ teamId: 3, distinctIds: ['a', 'b'], groups: [], deleted: true })
    const [plain] = encodePersonChange({ teamId: 3, distinctIds: ['a'], groups: [] })
    expect(decodePersonChange(plain)?.deleted).toBeUndefined()
    const [all] = encodePersonChange({ teamId: 3, distinctIds: [], groups: [], all: true, deleted: true })
    expect(decodePersonChange(all)).toEqual({ teamId: 3, distinctIds: [], groups: [], all: true, deleted: true })
  })
})
