import { describe, expect, test } from 'bun:test'
import { rowsAsTabSeparated } from './clickhouse-rows'
import { dialectFor } from './dialect'
import type { StoredEvent } from './store'

const legacy = dialectFor('18.16.1', 'db')

const row = (over: Partial<StoredEvent>): StoredEvent => ({
  uuid: '0190b5f4-0000-7000-8000-00000000000a',
  teamId: 1,
  event: 'e',
  distinctId: 'd',
  properties: '{}',
  timestamp: Date.UTC(2024, 5, 1, 12, 0, 0),
  createdAt: Date.UTC(2024, 5, 1, 12, 0, 1),
  personId: null,
  ...over,
})

describe('TabSeparated rows', () => {
  test('one line per row, fields escaped, NULL person as \\N, receipt times formatted per row', () => {
    const rows = [
      row({ event: 'tab\there', distinctId: 'back\\slash\nnew' }),
      row({ uuid: '0190b5f4-0000-7000-8000-00000000000b', teamId: 2, properties: '{"a":"x\\"y"}', personId: 'p', createdAt: Date.UTC(2024, 5, 2) }),
      row({ uuid: '0190b5f4-0000-7000-8000-00000000000c', event: 'nul\0cr\r', timestamp: Date.UTC(2024, 5, 1, 23, 59, 59, 999) }),
    ]
    expect(rowsAsTabSeparated(rows, legacy, '2024-06-03 00:00:00').toString('utf8')).toBe(
      '0190b5f4-0000-7000-8000-00000000000a\t1\ttab\\there\tback\\\\slash\\nnew\t{}\t2024-06-01 12:00:00\t2024-06-01 12:00:01\t\\N\t2024-06-03 00:00:00\n' +
        '0190b5f4-0000-7000-8000-00000000000b\t2\te\td\t{"a":"x\\\\"y"}\t2024-06-01 12:00:00\t2024-06-02 00:00:00\tp\t2024-06-03 00:00:00\n' +
        '0190b5f4-0000-7000-8000-00000000000c\t1\tnul\\0cr\\r\td\t{}\t2024-06-01 23:59:59\t2024-06-01 12:00:01\t\\N\t2024-06-03 00:00:00\n',
    )
  })

  test('the same rows always give the same text (a retry is recognised as the same block)', () => {
    const rows = Array.from({ length: 50 }, (_, i) => row({ distinctId: `user-${i}`, createdAt: Date.UTC(2024, 5, 1) + (i % 3) * 1000 }))
    expect(rowsAsTabSeparated(rows, legacy, 'x').equals(rowsAsTabSeparated([...rows], legacy, 'x'))).toBe(true)
    expect(rowsAsTabSeparated([], legacy, 'x')).toHaveLength(0)
  })

  test('as UTF-8, whatever the text: non-ASCII, surrogate pairs, lone surrogates (U+FFFD), a body larger than first guessed', () => {
    const odd = ['ünïcødé', 'pair 😀', 'lone \uD800 high', 'lone \uDC00 low', 'x'.repeat(5000), '日本語'.repeat(2000)]
    const rows = odd.map((text, i) => row({ uuid: i === 0 ? 'not ascïï' : `u${i}`, event: text, distinctId: text, properties: `{"text":"${text}"}`, personId: i % 2 ? text : null }))
    const line = (e: StoredEvent) =>
      `${e.uuid}\t1\t${e.event}\t${e.distinctId}\t${e.properties}\t2024-06-01 12:00:00\t2024-06-01 12:00:01\t${e.personId ?? '\\N'}\tx\n`
    expect(rowsAsTabSeparated(rows, legacy, 'x').equals(Buffer.from(rows.map(line).join('')))).toBe(true)
  })

  test('times that are not whole milliseconds (capture never makes them) are written as the dialect formats them', () => {
    const modern = dialectFor('26.7.1', 'db')
    const odd = row({ timestamp: Date.UTC(2024, 5, 1) + 0.5, createdAt: Number.NaN })
    const fields = rowsAsTabSeparated([odd], modern, 'x').toString('latin1').split('\t')
    expect(fields.slice(5, 7)).toEqual([modern.formatDateTime(odd.timestamp), modern.formatDateTime(odd.createdAt)])
  })
})
