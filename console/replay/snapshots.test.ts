import { afterEach, describe, expect, test } from 'bun:test'
import { consoleLines, loadRecordingEvents } from './snapshots'

const realFetch = globalThis.fetch
afterEach(() => {
  globalThis.fetch = realFetch
})

/** A server of `blocks` blocks (one event each) that refuses a range of more than `most` blocks as too large. */
function fakeServer(blocks: number, most: number, asked: string[]) {
  globalThis.fetch = (async (input: string) => {
    const url = new URL(input, 'http://console.test')
    asked.push(url.search)
    if (!url.searchParams.get('source')) return Response.json({ sources: Array.from({ length: blocks }, (_, i) => ({ source: 'blob_v2', blob_key: String(i) })) })
    const start = Number(url.searchParams.get('start_blob_key'))
    const end = Number(url.searchParams.get('end_blob_key'))
    if (end - start + 1 > most) return Response.json({ type: 'validation_error', code: 'answer_too_large', detail: 'too large', attr: 'end_blob_key' }, { status: 400 })
    const lines = []
    for (let i = end; i >= start; i--) lines.push(JSON.stringify(['w', { type: 3, timestamp: 1000 + i, data: { source: 1 } }]))
    return new Response(lines.join('\n'), { headers: { 'content-type': 'application/jsonl' } })
  }) as unknown as typeof fetch
}

describe('reading a recording', () => {
  test('blocks 20 at a time, a range too large asked again in halves, events in time order', async () => {
    const asked: string[] = []
    fakeServer(45, 6, asked)
    const { events, truncated } = await loadRecordingEvents(1, 'session-1', new AbortController().signal)
    expect(truncated).toBe(false)
    expect(events.map((e) => e.timestamp)).toEqual(Array.from({ length: 45 }, (_, i) => 1000 + i))
    expect(asked[0]).toBe('')
    expect(asked).toContain('?source=blob_v2&start_blob_key=0&end_blob_key=19')
    expect(asked).toContain('?source=blob_v2&start_blob_key=40&end_blob_key=44')
  })

  test('another refusal is the reader\'s error', async () => {
    globalThis.fetch = (async () => Response.json({ type: 'invalid_request', code: 'not_found', detail: 'Recording not found.' }, { status: 404 })) as unknown as typeof fetch
    await expect(loadRecordingEvents(1, 'gone', new AbortController().signal)).rejects.toThrow('Recording not found.')
  })

  test("the console log: rrweb's console plugin events, logged strings without their JSON quotes", () => {
    const lines = consoleLines([
      { type: 6, timestamp: 5, data: { plugin: 'rrweb/console@1', payload: { level: 'error', payload: ['"paid by"', '"a@b.c"', '3', '{"x":1}'] } } },
      { type: 6, timestamp: 6, data: { plugin: 'rrweb/network@1', payload: {} } },
      { type: 3, timestamp: 7, data: { source: 1 } },
    ])
    expect(lines).toEqual([{ timestamp: 5, level: 'error', text: 'paid by a@b.c 3 {"x":1}' }])
  })
})
