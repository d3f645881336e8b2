import { describe, expect, test } from 'bun:test'
import { batchInsertedAt, deduplicationToken } from './clickhouse'
import { classify } from './clickhouse-errors'
import type { StoredEvent } from './store'

const row = (uuid: string): StoredEvent => ({
  uuid,
  teamId: 1,
  event: 'e',
  distinctId: 'd',
  properties: '{}',
  timestamp: 0,
  createdAt: 0,
  personId: null,
})
const rows = (...uuids: string[]) => uuids.map(row)
const A = '0190b5f4-0000-7000-8000-00000000000a'
const B = '0190b5f4-0000-7000-8000-00000000000b'
const C = '0190b5f4-0000-7000-8000-00000000000c'

describe('insert deduplication token', () => {
  test('a retry of the same rows carries the same token', () => {
    expect(deduplicationToken(rows(A, B))).toBe(deduplicationToken(rows(A, B)))
  })

  test('different rows never share a token, whichever process or log sends them', () => {
    // Two processes each flushing their first log record used to both send "1-1" and lose the second block.
    const tokens = new Set([rows(A), rows(B), rows(A, B), rows(B, A), rows(A, B, C)].map(deduplicationToken))
    expect(tokens.size).toBe(5)
  })

  test('is short enough for a query setting and depends only on the uuids', () => {
    const token = deduplicationToken(rows(A, B))
    expect(token).toMatch(/^2-[0-9a-f]{40}$/)
    expect(deduplicationToken([{ ...row(A), event: 'other', timestamp: 5 }])).toBe(deduplicationToken(rows(A)))
  })
})

describe('the _inserted_at of a batch', () => {
  test('comes from the rows (the newest receipt), never from the clock: a retry sends the same bytes', () => {
    const batch = [{ ...row(A), createdAt: 5_000 }, { ...row(B), createdAt: 9_000 }, { ...row(C), createdAt: 7_000 }]
    expect(batchInsertedAt(batch)).toBe(9_000)
    expect(batchInsertedAt([...batch].reverse())).toBe(9_000)
  })
})

describe('classifying ClickHouse errors', () => {
  test('rows at fault (kept, and the batch split) versus the store (retried)', () => {
    const err = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {})
    expect(classify(err('Code: 252, e.displayText() = DB::Exception: Too many partitions for single INSERT block (more than 100).'), 'insert').transient).toBe(false)
    expect(classify(err('Too many partitions for a single INSERT block (more than 100)', '252'), 'insert').transient).toBe(false)
    expect(classify(err('Too many parts (300). Merges are processing significantly slower than inserts', '252'), 'insert').transient).toBe(true)
    expect(classify(err('Code: 27, e.displayText() = DB::Exception: Cannot parse input'), 'insert').transient).toBe(false)
    expect(classify(err('connect ECONNREFUSED 127.0.0.1:8123'), 'insert').transient).toBe(true)
  })
})
