import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SharedCounters } from './shared-counters'
import { WriteAheadLog } from './wal'
import { WalReader } from './wal-reader'
import { WalView } from './wal-view'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('the flush worker’s view of the log', () => {
  test('a reader that saw a new sequence number with a stale size catches up on its next read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-view-'))
    dirs.push(dir)
    const wal = WriteAheadLog.open({ dir, segmentBytes: 1 << 20, fsyncIntervalMs: 50 })
    const counters = new SharedCounters()
    const view = new WalView(counters)
    view.update(wal.snapshot())
    const publish = (items: number, size = wal.activeExtent.size) => counters.published(wal.lastSeq, wal.activeExtent.firstSeq, size, items)
    wal.append([new Uint8Array([1])])
    publish(1)
    const reader = new WalReader(view, 1)
    expect(reader.next()?.seq).toBe(1)

    // the capture thread publishes record 2, but this reader sees the old size with the new sequence number
    const staleSize = wal.activeExtent.size
    wal.append([new Uint8Array([2])])
    publish(1, staleSize)
    expect(reader.next()).toBeNull()
    publish(0) // the real size arrives
    expect(reader.next()?.seq).toBe(2)
    reader.close()
    await wal.close()
  })

  test('follows a roll to a new segment once the segment list arrives', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-view-'))
    dirs.push(dir)
    const wal = WriteAheadLog.open({ dir, segmentBytes: 64, fsyncIntervalMs: 50 })
    const counters = new SharedCounters()
    const view = new WalView(counters)
    view.update(wal.snapshot())
    const reader = new WalReader(view, 1)
    const append = (i: number) => {
      wal.append([new Uint8Array(40).fill(i)]) // 56 bytes a record: one segment each
      counters.published(wal.lastSeq, wal.activeExtent.firstSeq, wal.activeExtent.size, 1)
    }
    append(1)
    expect(reader.next()?.seq).toBe(1)
    for (let i = 2; i <= 5; i++) append(i)
    expect(reader.next()).toBeNull() // segments 2..5 are not known to the view yet
    view.update(wal.snapshot())
    expect([reader.next()?.seq, reader.next()?.seq, reader.next()?.seq, reader.next()?.seq]).toEqual([2, 3, 4, 5])
    reader.close()
    await wal.close()
  })
})
