// LIKE patterns as RE2 expressions (the DuckDB store's LIKE): checked against DuckDB's own regexp_full_match, so
// every escape is one RE2 accepts and every character stands for itself.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import { likeToRegex } from './literals'

let instance: DuckDBInstance
let connection: DuckDBConnection
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:', { threads: '1' })
  connection = await instance.connect()
})
afterAll(() => {
  connection.closeSync()
  instance.closeSync()
})

const matches = async (text: string, pattern: string): Promise<boolean> =>
  (await connection.runAndReadAll("SELECT regexp_full_match(?, ?, 's')", [text, likeToRegex(pattern)])).getRows()[0][0] as boolean

test('% is any text (runs of % are one), _ one character, \\ escapes; anything else is itself', () => {
  expect(likeToRegex('a%b_c')).toBe('a.*b.c')
  expect(likeToRegex('%%%x%%')).toBe('.*x.*')
  expect(likeToRegex('\\%\\_\\\\')).toBe('\\%\\_\\\\')
  expect(likeToRegex('a.b*c')).toBe('a\\.b\\*c')
  expect(likeToRegex('trailing\\')).toBe('trailing\\\\')
})

test('every ASCII character and a few others match themselves, and only themselves', async () => {
  const characters = [...Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).filter((c) => c !== '%' && c !== '_' && c !== '\\'), 'é', '😀', '\u2028']
  for (const c of characters) {
    expect({ c, self: await matches(`a${c}b`, `a${c}b`) }).toEqual({ c, self: true })
    expect({ c, other: await matches('axb', `a${c}b`) }).toEqual({ c, other: c === 'x' })
  }
})

test('the wildcards as on the other stores: _ is one character (not one byte), % crosses lines, the match is whole', async () => {
  expect(await matches('aé', 'a_')).toBe(true)
  expect(await matches('a😀', 'a_')).toBe(true)
  expect(await matches('a\nb', 'a%')).toBe(true)
  expect(await matches('a\nb', 'a_b')).toBe(true)
  expect(await matches('xaby', 'ab')).toBe(false)
  expect(await matches('a%b', 'a\\%b')).toBe(true)
  expect(await matches('axb', 'a\\%b')).toBe(false)
  expect(await matches('', '%')).toBe(true)
})

test('a pattern that makes a backtracking matcher take exponential time is linear here', async () => {
  const text = 'x'.repeat(100_000)
  const pattern = `${'%x'.repeat(200)}%y`
  const started = performance.now()
  expect(await matches(text, pattern)).toBe(false)
  console.log(`${pattern.length}-character pattern against ${text.length} characters: ${(performance.now() - started).toFixed(0)} ms`)
})
