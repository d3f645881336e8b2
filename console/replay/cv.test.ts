import { describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { decompressEvent, eventsOfLines, gunzipText } from './cv'

/** What posthog-js writes: gzip of the JSON, as a latin1 string. */
const packed = (value: unknown) => Buffer.from(gzipSync(JSON.stringify(value))).toString('latin1')

describe('cv decompression', () => {
  test('a full snapshot and a mutation come back as JSON; non-ASCII text survives', async () => {
    const node = { type: 0, childNodes: [{ type: 3, textContent: 'Héllo ✓ 日本' }], id: 1 }
    const full = await decompressEvent({ type: 2, timestamp: 1, cv: '2024-10', data: packed({ node, initialOffset: { top: 0, left: 0 } }) })
    expect(full).toEqual({ type: 2, timestamp: 1, data: { node, initialOffset: { top: 0, left: 0 } } })
    const adds = [{ parentId: 1, nextId: null, node: { type: 3, textContent: 'typed', id: 9 } }]
    const mutation = await decompressEvent({ type: 3, timestamp: 2, cv: '2024-10', data: { source: 0, adds: packed(adds), removes: packed([]), texts: packed([]), attributes: packed([]) } })
    expect(mutation.data).toEqual({ source: 0, adds, removes: [], texts: [], attributes: [] })
    expect('cv' in mutation).toBe(false)
  })

  test('style sheet rules are decompressed; other events pass through untouched', async () => {
    const rule = await decompressEvent({ type: 3, timestamp: 3, cv: '2024-10', data: { source: 8, id: 4, adds: packed([{ rule: 'p{}' }]) } })
    expect(rule.data).toEqual({ source: 8, id: 4, adds: [{ rule: 'p{}' }], removes: undefined })
    const plain = { type: 3, timestamp: 4, data: { source: 1, positions: [] } }
    expect(await decompressEvent(plain)).toBe(plain)
  })

  test('JSON lines of [windowId, event] → decompressed events; broken lines skipped; an unknown version refused', async () => {
    const lines = [JSON.stringify(['w1', { type: 4, timestamp: 1, data: { href: 'http://x/' } }]), 'not json', JSON.stringify(['w1', { type: 2, timestamp: 2, cv: '2024-10', data: packed({ node: { id: 1 } }) }]), '']
    const events = await eventsOfLines(lines.join('\n'))
    expect(events.map((e) => e.type)).toEqual([4, 2])
    expect(events[1]!.data).toEqual({ node: { id: 1 } })
    await expect(decompressEvent({ type: 2, timestamp: 1, cv: '2099-01', data: '' })).rejects.toThrow('unknown compression version')
  })

  test('a gzip bomb is refused at the inflated limit', async () => {
    const bomb = gzipSync(Buffer.alloc(5 * 1024 * 1024))
    await expect(gunzipText(bomb, 1024 * 1024)).rejects.toThrow('inflates past')
    expect((await gunzipText(gzipSync('ok'))).toString()).toBe('ok')
  })
})
