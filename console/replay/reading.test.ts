import { describe, expect, test } from 'bun:test'
import { consoleLines, readBlocks } from './reading'

class TooLarge extends Error {}

/** A store of `blocks` blocks (one event each, newest line first) that refuses a range of more than `most` blocks. */
function store(blocks: number, most: number, asked: string[]) {
  return async (start: number, end: number) => {
    asked.push(`${start}-${end}`)
    if (start < 0 || end >= blocks) throw new Error('out of range')
    if (end - start + 1 > most) throw new TooLarge()
    const lines = []
    for (let i = end; i >= start; i--) lines.push(JSON.stringify(['w', { type: 3, timestamp: 1000 + i, data: { source: 1 } }]))
    return lines.join('\n')
  }
}

describe('reading a recording', () => {
  test('blocks 20 at a time, a range too large asked again in halves, events in time order', async () => {
    const asked: string[] = []
    const { events, truncated } = await readBlocks(45, store(45, 6, asked), (e) => e instanceof TooLarge)
    expect(truncated).toBe(false)
    expect(events.map((e) => e.timestamp)).toEqual(Array.from({ length: 45 }, (_, i) => 1000 + i))
    expect(asked.slice(0, 3)).toEqual(['0-19', '0-9', '0-4'])
    expect(asked).toContain('20-39')
    expect(asked).toContain('40-44')
  })

  test('a single block too large, or another refusal, is the reader\'s error', async () => {
    await expect(readBlocks(3, store(3, 0, []), (e) => e instanceof TooLarge)).rejects.toBeInstanceOf(TooLarge)
    await expect(readBlocks(3, async () => Promise.reject(new Error('Recording not found.')), (e) => e instanceof TooLarge)).rejects.toThrow('Recording not found.')
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
