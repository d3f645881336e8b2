import { describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { csvColumns, csvColumnsProblem, parseCsvRow, parseJsonLine, uuidOfText } from './parse'
import { csvFields, fileBytes, splitRecords } from './reader'

const NOW = Date.UTC(2026, 11, 1)
const line = (o: Record<string, unknown>) => JSON.stringify({ uuid: '0193c000-0000-7000-8000-000000000001', event: 'e', distinct_id: 'd', timestamp: '2023-05-01T10:00:00Z', ...o })

describe('a JSON line of the export', () => {
  test('becomes the event capture takes: uuid lower-cased, timestamp kept, elements_chain and $set carried', () => {
    const parsed = parseJsonLine(line({ uuid: '0193C000-0000-7000-8000-00000000000A', elements_chain: 'a:nth-child="1"', $set: { plan: 'pro' }, person_id: 'x', properties: { k: 1 } }), NOW)
    expect(parsed).toEqual({
      event: {
        uuid: '0193c000-0000-7000-8000-00000000000a',
        event: 'e',
        distinct_id: 'd',
        timestamp: '2023-05-01T10:00:00.000Z',
        properties: { k: 1, $elements_chain: 'a:nth-child="1"' },
        $set: { plan: 'pro' },
      },
    })
  })

  test('properties as JSON text (ClickHouse rows) are read', () => {
    expect(parseJsonLine(line({ properties: '{"a":"b"}' }), NOW)).toMatchObject({ event: { properties: { a: 'b' } } })
  })

  test('each refusal has its reason', () => {
    const cases: [string, string][] = [
      ['{', 'invalid_json'],
      ['[1]', 'not_an_object'],
      [line({ event: '' }), 'no_event_name'],
      [line({ event: '$snapshot' }), 'recording_event'],
      [line({ distinct_id: ' ' }), 'no_distinct_id'],
      [line({ distinct_id: null }), 'no_distinct_id'],
      [line({ uuid: 'abc' }), 'invalid_uuid'],
      [line({ properties: [1] }), 'invalid_properties'],
      [line({ properties: '{oops' }), 'invalid_properties'],
      [line({ timestamp: undefined }), 'invalid_timestamp'],
      [line({ timestamp: '1969-12-31T00:00:00Z' }), 'invalid_timestamp'],
      [line({ timestamp: new Date(NOW + 24 * 3_600_000).toISOString() }), 'timestamp_in_future'],
      [line({ properties: JSON.parse(`${'{"a":'.repeat(130)}1${'}'.repeat(130)}`) }), 'too_deep'],
    ]
    for (const [text, reason] of cases) expect({ text: text.slice(0, 60), parsed: parseJsonLine(text, NOW) }).toEqual({ text: text.slice(0, 60), parsed: { refused: reason as never } })
  })

  test('an event without a uuid gets one from its text: the same line, the same uuid', () => {
    const text = JSON.stringify({ event: 'e', distinct_id: 'd', timestamp: '2023-05-01T10:00:00Z' })
    const a = parseJsonLine(text, NOW)
    expect('event' in a && a.event.uuid).toBe(uuidOfText(text))
    expect(uuidOfText(text)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(uuidOfText(`${text} `)).not.toBe(uuidOfText(text))
  })
})

describe("PostHog's CSV export", () => {
  test('the events table export: `*.` columns are the event, properties JSON text, person columns ignored', () => {
    const columns = csvColumns('\uFEFF*.uuid,*.event,*.properties,*.timestamp,*.distinct_id,*.elements_chain,*.created_at,event,person')
    expect(csvColumnsProblem(columns)).toBeNull()
    const row = '"0193c000-0000-7000-8000-000000000001","signup","{""plan"":""pro""}","2023-05-01 10:00:00","u1","","2023-05-01","signup","someone"'
    expect(parseCsvRow(row, columns, NOW)).toEqual({
      event: { uuid: '0193c000-0000-7000-8000-000000000001', event: 'signup', distinct_id: 'u1', timestamp: '2023-05-01T10:00:00.000Z', properties: { plan: 'pro' } },
    })
  })

  test('flattened property columns become properties, typed where the text is a number, boolean or JSON', () => {
    const columns = csvColumns('uuid,event,distinct_id,timestamp,properties.$browser,properties.count,properties.flag,properties.list')
    const parsed = parseCsvRow('0193c000-0000-7000-8000-000000000002,pageview,u2,2023-05-01T10:00:00Z,Firefox,12,true,"[1,2]"', columns, NOW)
    expect(parsed).toMatchObject({ event: { properties: { $browser: 'Firefox', count: 12, flag: true, list: [1, 2] } } })
  })

  test('a header without the needed columns is named; a row of the wrong width is refused', () => {
    expect(csvColumnsProblem(csvColumns('uuid,properties'))).toContain('event, distinct_id, timestamp')
    const columns = csvColumns('event,distinct_id,timestamp')
    expect(parseCsvRow('a,b', columns, NOW)).toEqual({ refused: 'wrong_column_count' })
  })

  test('fields: quotes, doubled quotes, commas and newlines inside quotes', () => {
    expect(csvFields('a,"b,c","d ""e""","f\ng",')).toEqual(['a', 'b,c', 'd "e"', 'f\ng', ''])
  })
})

describe('reading a file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'phog-import-unit-'))
  const collect = async (path: string, max: number, quoted: boolean) => {
    const out: (string | null)[] = []
    for await (const r of splitRecords(fileBytes(path), max, quoted)) out.push(r.text)
    return out
  }

  test('gzip is recognised by its magic bytes, whatever the name; CRLF and blank lines are handled', async () => {
    const path = join(dir, 'export.txt')
    writeFileSync(path, gzipSync('{"a":1}\r\n\n{"b":2}'))
    expect(await collect(path, 1000, false)).toEqual(['{"a":1}', '{"b":2}'])
  })

  test('a record over the bound is reported once, without being kept, and the next one is read', async () => {
    const path = join(dir, 'long.jsonl')
    writeFileSync(path, `{"a":1}\n${'x'.repeat(5000)}\n{"b":2}\n`)
    expect(await collect(path, 100, false)).toEqual(['{"a":1}', null, '{"b":2}'])
  })

  test('CSV records hold newlines inside quotes', async () => {
    const path = join(dir, 'rows.csv')
    writeFileSync(path, 'h1,h2\n"a\nb",c\nd,e\n')
    expect(await collect(path, 1000, true)).toEqual(['h1,h2', '"a\nb",c', 'd,e'])
  })
})
