import { describe, expect, test } from 'bun:test'
import { AnswerError, readJsonCompact } from './clickhouse-answer'

/** A body arriving in chunks of `size` characters, as a server's answer does. */
function body(text: string, size = 7): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  let at = 0
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close()
      controller.enqueue(bytes.slice(at, at + size))
      at += size
    },
  })
}

const answer = (rows: string[], tail = '\t],\n\n\t"rows": 2\n}\n') =>
  `{\n\t"meta":\n\t[\n\t\t{\n\t\t\t"name": "x",\n\t\t\t"type": "String"\n\t\t}\n\t],\n\n\t"data":\n\t[\n${rows.map((r, i) => `\t\t${r}${i < rows.length - 1 ? ',' : ''}\n`).join('')}${tail}`

describe('readJsonCompact', () => {
  test('rows as they arrive, strings with escaped newlines and quotes', async () => {
    const read = await readJsonCompact(body(answer(['["0", "a\\nb\'\\"", "5"]', '["1", "é", null]'])), 1000)
    expect(read).toEqual({ rows: [['0', 'a\nb\'"', '5'], ['1', 'é', null]], truncated: false, firstRowTooLarge: false })
  })

  test('no rows: ClickHouse writes the empty list with a blank line inside (read as an error before: 503 for every empty answer)', async () => {
    const empty = `{\n\t"meta":\n\t[\n\t\t{\n\t\t\t"name": "b",\n\t\t\t"type": "UInt64"\n\t\t}\n\t],\n\n\t"data":\n\t[\n\n\t],\n\n\t"rows": 0\n}\n`
    expect(await readJsonCompact(body(empty), 1000)).toEqual({ rows: [], truncated: false, firstRowTooLarge: false })
  })

  test('stops at the budget: the rows that fit, truncated; a first row past it is said so', async () => {
    const rows = Array.from({ length: 100 }, (_, i) => `["${String(i).padStart(8, '0')}"]`) // 12 characters each
    const cut = await readJsonCompact(body(answer(rows), 64), 12 * 10)
    expect(cut.truncated).toBe(true)
    expect(cut.rows).toHaveLength(10)
    expect(cut.rows[9]).toEqual(['00000009'])
    const big = await readJsonCompact(body(answer([`["${'x'.repeat(10_000)}"]`]), 100), 1000)
    expect(big).toMatchObject({ rows: [], truncated: true, firstRowTooLarge: true })
  })

  test('an error the server met after it began answering is an error, with its code', async () => {
    const mid = `{\n\t"meta":\n\t[\n\t],\n\n\t"data":\n\t[\n\t\t["1", 0],\n\t\t["2", 0]Code: 395, e.displayText() = DB::Exception: Value passed to 'throwIf' function is non zero\n`
    const error = await readJsonCompact(body(mid), 1000).catch((e) => e)
    expect(error).toBeInstanceOf(AnswerError)
    expect(error.message).toStartWith('Code: 395,')
    const modern = answer(['["1"]'], '\t],\n\t"rows": 1,\n\t"exception": "Code: 241. DB::Exception: Memory limit exceeded"\n}\n')
    expect((await readJsonCompact(body(modern), 1000).catch((e) => e)).message).toStartWith('Code: 241.')
    const cutOff = await readJsonCompact(body(answer(['["1"]'], '')), 1000).catch((e) => e)
    expect(cutOff).toBeInstanceOf(AnswerError)
  })
})
