import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync, closeSync, truncateSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WriteAheadLog, type WalRecord } from './wal'

const dirs: string[] = []
const logs: WriteAheadLog[] = []
afterEach(async () => {
  for (const l of logs.splice(0)) await l.close()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'phog-wal-'))
  dirs.push(d)
  return d
}

function open(d: string, over: Partial<Parameters<typeof WriteAheadLog.open>[0]> = {}): WriteAheadLog {
  const wal = WriteAheadLog.open({ dir: d, segmentBytes: 4096, fsyncIntervalMs: 50, spares: 1, ...over })
  logs.push(wal)
  return wal
}

const payload = (i: number, size = 100) => new TextEncoder().encode(`record-${i}-`.padEnd(size, '.'))
const text = (r: WalRecord) => new TextDecoder().decode(r.payload)

function readAll(wal: WriteAheadLog, from = 1): WalRecord[] {
  const reader = wal.reader(from)
  const out: WalRecord[] = []
  for (let r = reader.next(); r; r = reader.next()) out.push(r)
  reader.close()
  return out
}

async function closeAndForget(wal: WriteAheadLog): Promise<void> {
  await wal.close()
  logs.splice(logs.indexOf(wal), 1)
}

describe('write-ahead log', () => {
  test('records come back in order with consecutive sequence numbers, across segments', () => {
    const wal = open(dir())
    for (let i = 1; i <= 100; i++) expect(wal.append([payload(i)]).seq).toBe(i)
    const records = readAll(wal)
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
    expect(text(records[41])).toStartWith('record-42-')
    expect(readAll(wal, 95).map((r) => r.seq)).toEqual([95, 96, 97, 98, 99, 100])
  })

  test('a record made of several parts reads back as one payload', () => {
    const wal = open(dir())
    wal.append([new Uint8Array([1, 2]), new Uint8Array([]), new Uint8Array([3])])
    expect([...readAll(wal)[0].payload]).toEqual([1, 2, 3])
  })

  test('reopening recovers every record and appends continue after the last', async () => {
    const d = dir()
    const wal = open(d)
    for (let i = 1; i <= 60; i++) wal.append([payload(i)])
    await closeAndForget(wal)
    const again = open(d)
    expect(again.lastSeq).toBe(60)
    expect(again.append([payload(61)]).seq).toBe(61)
    expect(readAll(again).length).toBe(61)
  })

  test('a torn last record is cut off on recovery and overwritten by the next append', async () => {
    const d = dir()
    const wal = open(d, { segmentBytes: 1 << 20 })
    for (let i = 1; i <= 5; i++) wal.append([payload(i)])
    await closeAndForget(wal)
    const segment = join(d, readdirSync(d).find((f) => /^\d{16}\.seg$/.test(f))!)
    truncateSync(segment, statSync(segment).size - 30) // record 5 loses its tail
    const again = open(d, { segmentBytes: 1 << 20 })
    expect(again.lastSeq).toBe(4)
    expect(again.append([payload(99)]).seq).toBe(5)
    expect(text(readAll(again)[4])).toStartWith('record-99-')
  })

  test('a corrupted record ends recovery there', async () => {
    const d = dir()
    const wal = open(d, { segmentBytes: 1 << 20 })
    for (let i = 1; i <= 5; i++) wal.append([payload(i)])
    await closeAndForget(wal)
    const segment = join(d, readdirSync(d).find((f) => /^\d{16}\.seg$/.test(f))!)
    const fd = openSync(segment, 'r+')
    writeSync(fd, Buffer.from('XX'), 0, 2, 116 * 2 + 50) // inside record 3's payload
    closeSync(fd)
    expect(open(d, { segmentBytes: 1 << 20 }).lastSeq).toBe(2)
  })

  test('released segments are recycled, and their stale bytes are never read as records', async () => {
    const d = dir()
    const wal = open(d, { segmentBytes: 1024 })
    for (let i = 1; i <= 40; i++) wal.append([payload(i)])
    wal.release(30)
    await Bun.sleep(50)
    const names = readdirSync(d)
    expect(names.some((n) => n.startsWith('spare-'))).toBe(true)
    for (let i = 41; i <= 80; i++) wal.append([payload(i)]) // written into recycled files
    await closeAndForget(wal)
    const again = open(d, { segmentBytes: 1024 })
    expect(again.lastSeq).toBe(80)
    const records = readAll(again, 31)
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 31))
    expect(text(records[records.length - 1])).toStartWith('record-80-')
  })

  test('after forgetLogged, what was logged is gone from every file once released: no recycled copy, no stale tail', async () => {
    const d = dir()
    const wal = open(d, { segmentBytes: 1024, spares: 2 })
    const secret = (i: number) => new TextEncoder().encode(`erase-me-${i}-`.padEnd(100, '.'))
    const filesHolding = (marker: string) => readdirSync(d).filter((n) => readFileSync(join(d, n)).includes(marker))
    for (let i = 1; i <= 40; i++) wal.append([secret(i)])
    wal.release(30) // recycled: the old records are still in the spares
    await Bun.sleep(50)
    expect(filesHolding('erase-me-').length).toBeGreaterThan(1)
    wal.forgetLogged()
    expect(readAll(wal, 31).map((r) => r.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 31)) // nothing lost
    for (let i = 41; i <= 45; i++) wal.append([payload(i)])
    wal.release(40) // every consumer passed the forgotten records
    await Bun.sleep(50)
    expect(filesHolding('erase-me-')).toEqual([])
    expect(readAll(wal, 41).map((r) => r.seq)).toEqual([41, 42, 43, 44, 45])
    await closeAndForget(wal)
    expect(open(d, { segmentBytes: 1024 }).lastSeq).toBe(45)
  })

  test('after a restart, spares are taken for recycled ones: forgetLogged deletes them', async () => {
    const d = dir()
    const wal = open(d, { segmentBytes: 1024, spares: 3 })
    for (let i = 1; i <= 27; i++) wal.append([new TextEncoder().encode(`erase-me-${i}-`.padEnd(100, '.'))])
    wal.release(27)
    await closeAndForget(wal)
    const again = open(d, { segmentBytes: 1024, spares: 3 })
    again.append([payload(28)])
    again.forgetLogged()
    again.append([payload(29)])
    again.release(28)
    await Bun.sleep(50)
    expect(readdirSync(d).filter((n) => readFileSync(join(d, n)).includes('erase-me-'))).toEqual([])
    expect(readAll(again, 29).map((r) => r.seq)).toEqual([29])
  })

  test('with fsync on every acknowledgement, appends resolve after a shared fdatasync', async () => {
    const wal = open(dir(), { fsyncIntervalMs: 0, segmentBytes: 1 << 20 })
    const appended = Array.from({ length: 50 }, (_, i) => wal.append([payload(i)]))
    expect(appended.every((a) => a.durable instanceof Promise)).toBe(true)
    await Promise.all(appended.map((a) => a.durable))
    expect(open(dir(), { fsyncIntervalMs: 50 }).append([payload(1)]).durable).toBeNull()
  })

  test('an empty log can start at a later sequence number', () => {
    const wal = open(dir())
    wal.startAt(1000)
    expect(wal.append([payload(1)]).seq).toBe(1000)
    expect(readAll(wal, 1000).length).toBe(1)
  })

  test('a reader reading while the log grows gets every record whole, small or larger than what it reads at once', () => {
    const wal = open(dir(), { segmentBytes: 8 << 20 })
    const sizes = [100, 700_000, 50, 1_500_000, 300_000, 300_000, 300_000, 10, 2_100_000, 64]
    const reader = wal.reader(1)
    const got: WalRecord[] = []
    sizes.forEach((size, i) => {
      wal.append([payload(i + 1, size)])
      // every other record is read as soon as it is written: the segment's valid extent keeps moving
      if (i % 2 === 1) for (let r = reader.next(); r; r = reader.next()) got.push(r)
    })
    for (let r = reader.next(); r; r = reader.next()) got.push(r)
    reader.close()
    expect(got.map((r) => r.seq)).toEqual(sizes.map((_, i) => i + 1))
    expect(got.map((r) => r.payload.length)).toEqual(sizes)
    got.forEach((r, i) => expect(text(r)).toBe(new TextDecoder().decode(payload(i + 1, sizes[i]))))
  })
})

describe('spare segments and close', () => {
  test('no spare is started once close has begun: the log directory can be removed as soon as close returns', async () => {
    for (let round = 0; round < 5; round++) {
      const d = dir()
      // several spares of 8 MiB: when close begins, one is being prepared and (before) it would start the next
      const wal = WriteAheadLog.open({ dir: d, segmentBytes: 8 << 20, fsyncIntervalMs: 50, spares: 3 })
      await Bun.sleep(1)
      await wal.close()
      const after = readdirSync(join(d)).sort()
      await Bun.sleep(150)
      expect(readdirSync(join(d)).sort()).toEqual(after)
    }
  })

  test('a spare that cannot be created (its directory gone) is a failed spare, not a rejection nobody handles', async () => {
    const d = dir()
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const wal = open(d, { segmentBytes: 8 << 20, spares: 3 })
      rmSync(d, { recursive: true, force: true }) // the next spare's open fails with ENOENT
      await Bun.sleep(300)
      await closeAndForget(wal).catch(() => undefined)
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })
})
