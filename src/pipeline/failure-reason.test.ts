import { describe, expect, test } from 'bun:test'
import { StoreError } from '../events/store'
import { connectionFailure } from './failure-reason'
import { reasonOf } from './isolate'

const withCode = (message: string, code: string | number) => Object.assign(new Error(message), { code })

describe('why a batch failed', () => {
  test('a refused, reset or unresolvable connection is `unreachable`, however deeply it is wrapped', () => {
    const refused = withCode('connect ECONNREFUSED 127.0.0.1:8123', 'ECONNREFUSED')
    expect(reasonOf(refused)).toBe('unreachable')
    // the ClickHouse store wraps the client's error, and the not-yet-initialised store wraps that one
    const wrapped = new StoreError('clickhouse insert: connect ECONNREFUSED', true, refused)
    expect(reasonOf(new StoreError('clickhouse store not reachable yet', true, wrapped))).toBe('unreachable')
    expect(reasonOf(withCode('read ECONNRESET', 'ECONNRESET'))).toBe('unreachable')
    expect(reasonOf(withCode('getaddrinfo ENOTFOUND clickhouse', 'ENOTFOUND'))).toBe('unreachable')
    expect(reasonOf(withCode('Unable to connect', 'ConnectionRefused'))).toBe('unreachable')
    expect(reasonOf(new AggregateError([withCode('connect ECONNREFUSED ::1:8123', 'ECONNREFUSED')], 'connect failed'))).toBe('unreachable')
    expect(reasonOf(new Error('socket hang up'))).toBe('unreachable')
    // Postgres shutting down, postgres.js losing its connection
    expect(reasonOf(withCode('terminating connection due to administrator command', '57P01'))).toBe('unreachable')
    expect(reasonOf(withCode('write CONNECTION_CLOSED', 'CONNECTION_CLOSED'))).toBe('unreachable')
  })

  test('a store that does not answer in time is `timeout`', () => {
    // @clickhouse/client's request timeout has no code
    expect(reasonOf(new StoreError('clickhouse insert: Timeout error.', true, new Error('Timeout error.')))).toBe('timeout')
    expect(reasonOf(withCode('connect ETIMEDOUT', 'ETIMEDOUT'))).toBe('timeout')
    expect(reasonOf(withCode('write CONNECT_TIMEOUT', 'CONNECT_TIMEOUT'))).toBe('timeout')
    expect(reasonOf(withCode('canceling statement due to statement timeout', '57014'))).toBe('timeout')
    // ClickHouse 18.16 words its code into the message
    expect(reasonOf(new StoreError('x', true, new Error('Code: 159, e.displayText() = DB::Exception: Timeout exceeded')))).toBe('timeout')
    expect(connectionFailure(Object.assign(new Error('The operation timed out.'), { name: 'TimeoutError' }))).toBe('timeout')
  })

  test('everything else is what the store said, as before', () => {
    expect(reasonOf(new StoreError('clickhouse insert: Code: 27. Cannot parse input', false, new Error('Code: 27. Cannot parse input')))).toBe('rejected_by_store')
    expect(reasonOf(withCode('value too long for type character varying(200)', '22001'))).toBe('rejected_22001')
    expect(reasonOf(Object.assign(new Error('x'), { reason: 'too_large' }))).toBe('too_large')
    expect(reasonOf(new Error('Too many parts (300). Merges are processing significantly slower than inserts'))).toBe('rejected_by_store')
    expect(connectionFailure(undefined)).toBeNull()
    expect(connectionFailure('a string')).toBeNull()
  })

  test('a cause chain that loops is read a bounded number of steps', () => {
    const a = new Error('a') as Error & { cause?: unknown }
    const b = new Error('b', { cause: a })
    a.cause = b
    expect(connectionFailure(a)).toBeNull()
  })
})
