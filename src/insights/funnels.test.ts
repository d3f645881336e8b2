// The funnel runner's own parsing: the query layer's times read without Date.parse, to the millisecond.
import { expect, test } from 'bun:test'
import { parseUtc } from './funnels'

test('times as the stores answer them', () => {
  for (const text of ['2024-05-06T01:00:00.000Z', '2024-05-06T01:00:00Z', '2024-02-29T23:59:59.999Z', '1970-01-01T00:00:00.000Z', '2099-12-31T12:34:56.5Z']) {
    expect([text, parseUtc(text)]).toEqual([text, Date.parse(text)])
  }
  // a space instead of T and more than milliseconds: read to the millisecond
  expect(parseUtc('2024-05-06 01:02:03.123456')).toBe(Date.UTC(2024, 4, 6, 1, 2, 3, 123))
  // anything else goes to Date.parse
  expect(parseUtc('2024-05-06T01:00:00+02:00')).toBe(Date.UTC(2024, 4, 5, 23))
})
