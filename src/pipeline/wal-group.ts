// The log's group-commit writer. Capture's requests do not write the log themselves: each hands its record to
// this writer and waits. While one group is being written, the records that arrive wait together; then all of
// them go to the disk in one writev and, with WAL_FSYNC_INTERVAL_MS=0, one fdatasync; each waiting request is
// answered once its group is written (and synced). With a sync per group, the write and the sync go through the
// thread pool (off the serving thread, which serves other requests meanwhile); with the sync on an interval, the
// writev is made here, a microtask after the group's first record: a round trip through the thread pool cost more
// than copying the group into the page cache (ingest bench 0.72x, p99 1.7x, against writing on this thread).
//
// Order: sequence numbers are given when a group is formed, in the order the records were handed over (the order of
// the requests' accept() calls, as when each wrote its own record), and a group is written whole before the next
// is formed. The log's consumers read records by sequence number and only up to what is written (the log's extent
// moves when a group's write completes), so what they see, and in what order, is what it was.
import { fdatasync, writev, writevSync } from 'node:fs'
import { FRAME, type Segment } from './wal-reader'

export function frameOf(seq: number, length: number, crcOfPayload: (seed: number) => number): Buffer {
  const frame = Buffer.allocUnsafe(FRAME)
  frame.writeUInt32LE(length, 0)
  frame.writeUInt32LE(seq % 0x1_0000_0000, 8)
  frame.writeUInt32LE(Math.floor(seq / 0x1_0000_0000), 12)
  frame.writeUInt32LE(crcOfPayload(Bun.hash.crc32(frame.subarray(8, 16))) >>> 0, 4)
  return frame
}

export function crcOfParts(parts: Uint8Array[]): (seed: number) => number {
  return (seed) => {
    let crc = seed
    for (const p of parts) crc = Bun.hash.crc32(p, crc)
    return crc
  }
}

/** The log as the writer sees it: where a group goes, and what makes a written group part of the log. */
export interface GroupTarget {
  /**
   * The active segment, its file and the next sequence number, after rolling to a new segment when a record of
   * `size` bytes does not fit in the active one. Throws (a WalWriteError) when no segment can be started.
   */
  groupStart(size: number): { fd: number; segment: Segment; seq: number }
  /** The group's bytes are written: its records become part of the log (readers may read them). */
  groupWritten(segment: Segment, bytes: number, lastSeq: number): void
  /** The group's write or sync failed: the error its requests are refused with. */
  refusal(error: unknown, during: 'write' | 'sync'): Error
  readonly segmentBytes: number
  /** fdatasync each group before answering its requests */
  readonly syncEach: boolean
}

interface Waiting {
  parts: Uint8Array[]
  size: number
  /** called once the record is written (in sequence order, before any sync): the record is in the log */
  onWritten?: (seq: number) => void
  resolve(seq: number): void
  reject(error: unknown): void
}

/** At most this many bytes in one group: the requests waiting behind a huge group are not held for all of it. */
const MAX_GROUP_BYTES = 32 * 1024 * 1024
/** writev takes at most IOV_MAX (1024 on Linux) buffers at once: larger groups are written in slices */
const MAX_BUFFERS_PER_WRITE = 1024

function writevAsync(fd: number, buffers: Uint8Array[], position: number): Promise<number> {
  return new Promise((resolve, reject) => writev(fd, buffers as NodeJS.ArrayBufferView[], position, (error, written) => (error ? reject(error) : resolve(written))))
}

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())))
}

/** Every byte of `buffers` at `position`: a short write is continued until it completes or fails with the reason. */
async function writeAll(fd: number, buffers: Uint8Array[], position: number): Promise<void> {
  for (let start = 0; start < buffers.length; start += MAX_BUFFERS_PER_WRITE) {
    const slice = buffers.slice(start, start + MAX_BUFFERS_PER_WRITE)
    let size = 0
    for (const b of slice) size += b.byteLength
    let written = await writevAsync(fd, slice, position)
    while (written < size) {
      const more = await writevAsync(fd, [Buffer.concat(slice).subarray(written)], position + written)
      if (more === 0) throw Object.assign(new Error(`short write: ${written} of ${size} bytes`), { code: 'EIO' })
      written += more
    }
    position += size
  }
}

/** writeAll on this thread: a group's bytes copied into the page cache cost less than a trip through the thread pool. */
function writeAllHere(fd: number, buffers: Uint8Array[], position: number): void {
  for (let start = 0; start < buffers.length; start += MAX_BUFFERS_PER_WRITE) {
    const slice = buffers.slice(start, start + MAX_BUFFERS_PER_WRITE)
    let size = 0
    for (const b of slice) size += b.byteLength
    let written = writevSync(fd, slice as NodeJS.ArrayBufferView[], position)
    while (written < size) {
      const more = writevSync(fd, [Buffer.concat(slice).subarray(written)], position + written)
      if (more === 0) throw Object.assign(new Error(`short write: ${written} of ${size} bytes`), { code: 'EIO' })
      written += more
    }
    position += size
  }
}

export class GroupWriter {
  private queue: Waiting[] = []
  private running = false
  /** a group's write or sync is in flight: the active segment's end is the writer's */
  private inFlight = false
  /** records handed over, and records written or refused (both in order): what settled() waits for */
  private handed = 0
  private settledCount = 0
  private settledWaiters: { through: number; resolve: () => void }[] = []
  /** work that must not run while a group is in flight (a roll asked from outside), run between groups */
  private betweenGroups: (() => void)[] = []
  /** groups written, and records in them (for tests and metrics) */
  groups = 0
  recordsWritten = 0

  constructor(private readonly target: GroupTarget) {}

  /** A group is being written, or records are waiting for one. */
  get busy(): boolean {
    return this.inFlight || this.queue.length > 0
  }

  /** Hand a record over; resolves with its sequence number once it is written (and synced, with syncEach). */
  write(parts: Uint8Array[], onWritten?: (seq: number) => void): Promise<number> {
    let size = FRAME
    for (const p of parts) size += p.length
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ parts, size, onWritten, resolve, reject })
      this.handed++
      this.start()
    })
  }

  /** Resolves once every record handed over before this call is written or refused. */
  settled(): Promise<void> {
    if (this.settledCount >= this.handed) return Promise.resolve()
    return new Promise((resolve) => this.settledWaiters.push({ through: this.handed, resolve }))
  }

  /** Run `task` when no group is in flight: now if the writer is idle, else before the next group is formed. */
  whenBetweenGroups(task: () => void): void {
    if (!this.inFlight) task()
    else this.betweenGroups.push(task)
  }

  private start(): void {
    if (this.running) return
    this.running = true
    // a microtask later: records handed over in the same turn of the event loop go in the first group
    queueMicrotask(() => void this.run())
  }

  private async run(): Promise<void> {
    try {
      for (;;) {
        for (const task of this.betweenGroups.splice(0)) task()
        if (this.queue.length === 0) break
        this.inFlight = true
        try {
          await this.writeGroup()
        } finally {
          // (cleared by writeGroup itself before it answers: what its answers do next finds the writer free)
          this.inFlight = false
        }
      }
    } finally {
      this.running = false
      for (const task of this.betweenGroups.splice(0)) task()
      if (this.queue.length > 0) this.start()
    }
  }

  private async writeGroup(): Promise<void> {
    let start: { fd: number; segment: Segment; seq: number }
    try {
      start = this.target.groupStart(this.queue[0].size)
    } catch (error) {
      // no segment for the first record: it alone is refused (as a write of its own would have been)
      this.refuse([this.queue.shift()!], error)
      return
    }
    const { fd, segment, seq } = start
    const buffers: Uint8Array[] = []
    let bytes = 0
    let taken = 0
    for (; taken < this.queue.length; taken++) {
      const next = this.queue[taken]
      // the first record goes in even alone past the segment's size (a new segment holds it whole)
      if (taken > 0 && (segment.size + bytes + next.size > this.target.segmentBytes || bytes + next.size > MAX_GROUP_BYTES)) break
      buffers.push(frameOf(seq + taken, next.size - FRAME, crcOfParts(next.parts)), ...next.parts)
      bytes += next.size
    }
    const group = this.queue.splice(0, taken)
    try {
      if (this.target.syncEach) await writeAll(fd, buffers, segment.size)
      else writeAllHere(fd, buffers, segment.size)
    } catch (error) {
      // bytes past the segment's extent are not part of the log: the next group writes over them
      this.refuse(group, this.target.refusal(error, 'write'))
      return
    }
    try {
      this.target.groupWritten(segment, bytes, seq + group.length - 1)
      this.groups++
      this.recordsWritten += group.length
      for (let i = 0; i < group.length; i++) group[i].onWritten?.(seq + i)
    } catch (error) {
      // (a fault of the caller's bookkeeping, not of the disk: its requests are not left waiting for ever)
      this.refuse(group, error)
      return
    }
    if (this.target.syncEach) {
      try {
        await datasync(fd)
      } catch (error) {
        // written but maybe not durable: the requests are refused (and retried); the records stay in the log
        this.refuse(group, this.target.refusal(error, 'sync'))
        return
      }
    }
    this.inFlight = false
    for (let i = 0; i < group.length; i++) group[i].resolve(seq + i)
    this.settle(group.length)
  }

  private refuse(group: Waiting[], error: unknown): void {
    this.inFlight = false
    for (const w of group) w.reject(error)
    this.settle(group.length)
  }

  private settle(n: number): void {
    this.settledCount += n
    if (this.settledWaiters.length === 0) return
    const still: typeof this.settledWaiters = []
    for (const w of this.settledWaiters) (w.through <= this.settledCount ? w.resolve() : still.push(w))
    this.settledWaiters = still
  }
}
