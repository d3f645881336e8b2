// The write-ahead log: what capture has acknowledged, in order, on disk.
//
// Records: a 16-byte frame (payload length u32, crc32 u32 of seq+payload, seq u64) then the payload.
// Segments are files named by their first sequence number. A segment every consumer has passed is recycled
// (renamed and overwritten) rather than deleted, and a spare is preallocated ahead of need: in this VM,
// writing over allocated pages is ~10x cheaper than growing a file. Recovery scans each segment until a
// frame is short, fails its crc, or carries the wrong sequence number (stale bytes of a recycled file
// always carry older ones), and appends resume there (wal-recovery.ts). Capture's appends go through the
// group-commit writer (wal-group.ts, write()): the serving thread never writes the file itself.
import {
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writevSync,
} from 'node:fs'
import { open as openAsync } from 'node:fs/promises'
import { join } from 'node:path'
import { crcOfParts, frameOf, GroupWriter } from './wal-group'
import { FRAME, WalReader, type Segment, type WalSource } from './wal-reader'
import { recoverSegments } from './wal-recovery'

export { WalReader, type Segment, type WalRecord, type WalSource } from './wal-reader'

const SPARE = /^spare-\d+\.seg$/

export interface WalOptions {
  dir: string
  segmentBytes: number
  /** 0: fdatasync before an append's `durable` resolves (group commit); otherwise on this interval */
  fsyncIntervalMs: number
  /** recycled or preallocated segments kept ready */
  spares?: number
  /** the segment list changed (a new segment, or segments released) */
  onSegmentsChanged?: () => void
}

export interface Appended {
  seq: number
  size: number
  /** resolves once the record is on stable storage (group commit); null when fsync runs on an interval */
  durable: Promise<void> | null
}

/** The log cannot take this record now (disk full, I/O error); nothing was acknowledged. */
export class WalWriteError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message)
  }
}


const segmentName = (seq: number) => `${String(seq).padStart(16, '0')}.seg`

export class WriteAheadLog implements WalSource {
  private segments: Segment[] = []
  private spares: string[] = []
  /** spares that were segments: their old records stay readable until written over */
  private recycled = new Set<string>()
  /** segments whose records all precede this are deleted, not recycled, once released (an erasure asked) */
  private wipeThroughSeq = 0
  private fd = -1
  private nextSeq = 1
  private dirty = false
  private syncTimer: ReturnType<typeof setInterval> | undefined
  private syncWaiters: (() => void)[] = []
  private syncFailures: ((e: unknown) => void)[] = []
  private syncing = false
  private preparing: Promise<void> | null = null
  private spareCounter = 0
  private spareRetryAt = 0
  private closed = false
  /** close() has begun: no new spare segment is started (one in preparation would otherwise start the next) */
  private closing = false
  /** capture's appends: grouped, written off the serving thread (wal-group.ts) */
  private readonly writer: GroupWriter

  private constructor(private readonly options: WalOptions) {
    this.writer = new GroupWriter({
      segmentBytes: options.segmentBytes,
      syncEach: options.fsyncIntervalMs === 0,
      groupStart: (size) => {
        if (this.closed) throw new WalWriteError('log is closed', 'ECLOSED')
        try {
          // rolling can fail (no room for a new segment): the record that needed it is refused
          if (this.active.size > 0 && this.active.size + size > this.options.segmentBytes) this.roll()
        } catch (error) {
          throw new WalWriteError(`write-ahead log append failed: ${(error as Error).message}`, (error as NodeJS.ErrnoException).code)
        }
        return { fd: this.fd, segment: this.active, seq: this.nextSeq }
      },
      groupWritten: (segment, bytes, lastSeq) => {
        segment.size += bytes
        segment.lastSeq = lastSeq
        this.nextSeq = lastSeq + 1
        this.dirty = true
      },
      refusal: (error, during) =>
        error instanceof WalWriteError
          ? error
          : new WalWriteError(`${during === 'write' ? 'write-ahead log append' : 'fdatasync'} failed: ${(error as Error).message}`, (error as NodeJS.ErrnoException).code),
    })
  }

  /** Open the log in `dir`, recovering what a previous process wrote. */
  static open(options: WalOptions): WriteAheadLog {
    const wal = new WriteAheadLog(options)
    wal.recover()
    return wal
  }

  /** Sequence number of the newest record (0 when none was ever written). */
  get lastSeq(): number {
    return this.nextSeq - 1
  }

  /** Sequence number of the oldest record still held. */
  get firstSeq(): number {
    return this.segments[0]?.firstSeq ?? this.nextSeq
  }

  private recover(): void {
    const dir = this.options.dir
    mkdirSync(dir, { recursive: true })
    const names = readdirSync(dir)
    this.spares = names.filter((n) => SPARE.test(n)).map((n) => join(dir, n))
    this.spareCounter = this.spares.length
    this.recycled = new Set(this.spares) // which were zeroed and which were segments is not known after a restart
    this.segments = recoverSegments(dir, names)
    const last = this.segments[this.segments.length - 1]
    this.nextSeq = last ? last.lastSeq + 1 : 1
    if (!last) this.segments.push(this.newSegment(this.nextSeq))
    this.fd = openSync(this.active.path, 'r+')
    if (this.options.fsyncIntervalMs > 0) {
      this.syncTimer = setInterval(() => this.syncOnInterval(), this.options.fsyncIntervalMs)
      this.syncTimer.unref?.()
    }
    this.prepareSpare()
  }

  /** Set the first sequence number of an empty log (used when the checkpoint is ahead of the files). */
  startAt(seq: number): void {
    if (this.lastSeq >= seq) return
    if (this.active.size !== 0 || this.segments.length !== 1) return
    const old = this.active.path
    const path = join(this.options.dir, segmentName(seq))
    closeSync(this.fd)
    renameSync(old, path)
    this.segments[0] = { firstSeq: seq, path, size: 0, lastSeq: seq - 1 }
    this.fd = openSync(path, 'r+')
    this.nextSeq = seq
    this.options.onSegmentsChanged?.()
  }

  private get active(): Segment {
    return this.segments[this.segments.length - 1]
  }

  private newSegment(firstSeq: number): Segment {
    const path = join(this.options.dir, segmentName(firstSeq))
    const spare = this.spares.shift()
    if (spare) this.recycled.delete(spare)
    if (spare && existsSync(spare)) renameSync(spare, path)
    else closeSync(openSync(path, 'w'))
    return { firstSeq, path, size: 0, lastSeq: firstSeq - 1 }
  }

  private roll(): void {
    // The new segment first: if there is no room for it, the log is left as it was.
    const segment = this.newSegment(this.nextSeq)
    const fd = openSync(segment.path, 'r+')
    const old = this.fd
    if (this.dirty) {
      // Off the event loop: a full segment can take a while to reach the disk. (With fsync on every
      // acknowledgement there is nothing left to sync here.)
      this.dirty = false
      fdatasync(old, () => closeSync(old))
    } else {
      closeSync(old)
    }
    this.segments.push(segment)
    this.fd = fd
    this.prepareSpare()
    this.options.onSegmentsChanged?.()
  }

  /** Preallocate a spare segment in the background (zeros written through the thread pool). */
  private prepareSpare(): void {
    const want = this.options.spares ?? 2
    if (this.preparing || this.spares.length >= want || this.closing || Date.now() < this.spareRetryAt) return
    const path = join(this.options.dir, `spare-${++this.spareCounter}.seg`)
    this.preparing = (async () => {
      let ok = false
      let handle: Awaited<ReturnType<typeof openAsync>> | undefined
      try {
        // opened inside the try: a directory gone or a table of files full is a failed spare, not a rejection
        // nobody handles
        handle = await openAsync(path, 'w')
        const zeros = Buffer.alloc(1024 * 1024)
        for (let written = 0; written < this.options.segmentBytes; written += zeros.length) {
          await handle.write(zeros, 0, Math.min(zeros.length, this.options.segmentBytes - written), written)
        }
        await handle.datasync()
        await handle.close()
        if (this.closed) unlinkSync(path)
        else this.spares.push(path)
        ok = true
      } catch {
        // No room for a spare (the disk is nearly full): appends grow the active segment instead, and the
        // next attempt waits, rather than spinning on a full disk.
        this.spareRetryAt = Date.now() + 5000
        await handle?.close().catch(() => undefined)
        try {
          unlinkSync(path)
        } catch {
          // already gone
        }
      } finally {
        this.preparing = null
      }
      if (ok) this.prepareSpare() // until enough are ready
    })()
  }

  /**
   * Append one record made of `parts` through the group-commit writer (wal-group.ts): resolves with its sequence
   * number once it is written, in the OS (and, with fsyncIntervalMs 0, on stable storage); rejects with a
   * WalWriteError when the disk refused it. `onWritten` is called as soon as it is written, before any sync.
   */
  write(parts: Uint8Array[], onWritten?: (seq: number) => void): Promise<number> {
    if (this.closed) return Promise.reject(new WalWriteError('log is closed', 'ECLOSED'))
    return this.writer.write(parts, onWritten)
  }

  /** Resolves once every record handed to write() before this call is written or refused. */
  settled(): Promise<void> {
    return this.writer.settled()
  }

  /** Groups written by write(), and the records in them (how well appends are grouped). */
  get groupStats(): { groups: number; records: number } {
    return { groups: this.writer.groups, records: this.writer.recordsWritten }
  }

  /**
   * Append one record made of `parts`, synchronously, on the calling thread (tools and tests; capture uses write()).
   * Throws WalWriteError (nothing written) when the disk refuses it; `durable` covers fsync.
   */
  append(parts: Uint8Array[]): Appended {
    if (this.closed) throw new WalWriteError('log is closed', 'ECLOSED')
    // the group writer owns the active segment's end while it has work
    if (this.writer.busy) throw new WalWriteError('log is being written by the group writer', 'EBUSY')
    let length = 0
    for (const p of parts) length += p.length
    const size = FRAME + length
    const seq = this.nextSeq
    const frame = frameOf(seq, length, crcOfParts(parts))
    let segment = this.active
    try {
      // Rolling can fail too (no room for a new segment): it is part of the append that failed.
      if (segment.size > 0 && segment.size + size > this.options.segmentBytes) {
        this.roll()
        segment = this.active
      }
      // A short write is continued: either it completes, or the retry fails with the real reason (ENOSPC).
      let written = writevSync(this.fd, [frame, ...parts], segment.size)
      while (written < size) {
        const rest = Buffer.concat([frame, ...parts]).subarray(written)
        const more = writevSync(this.fd, [rest], segment.size + written)
        if (more === 0) throw Object.assign(new Error(`short write: ${written} of ${size} bytes`), { code: 'EIO' })
        written += more
      }
    } catch (error) {
      // Bytes past segment.size are not part of the log; the next append writes over them.
      const code = (error as NodeJS.ErrnoException).code
      throw new WalWriteError(`write-ahead log append failed: ${(error as Error).message}`, code)
    }
    segment.size += size
    segment.lastSeq = seq
    this.nextSeq++
    this.dirty = true
    return { seq, size, durable: this.options.fsyncIntervalMs === 0 ? this.requestSync() : null }
  }

  private requestSync(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.syncWaiters.push(resolve)
      this.syncFailures.push(reject)
      if (!this.syncing) setImmediate(() => this.runSync())
    })
  }

  /** One fdatasync for every append waiting on it (group commit), off the event loop. */
  private runSync(): void {
    if (this.syncing || this.syncWaiters.length === 0) return
    this.syncing = true
    const waiters = this.syncWaiters
    const failures = this.syncFailures
    this.syncWaiters = []
    this.syncFailures = []
    this.dirty = false
    fdatasync(this.fd, (error) => {
      this.syncing = false
      if (error) for (const f of failures) f(new WalWriteError(`fdatasync failed: ${error.message}`, error.code))
      else for (const w of waiters) w()
      if (this.syncWaiters.length > 0) this.runSync()
    })
  }

  private syncOnInterval(): void {
    if (!this.dirty || this.syncing) return
    this.dirty = false
    this.syncing = true
    fdatasync(this.fd, () => {
      this.syncing = false
    })
  }

  /** Flush everything written so far to stable storage. */
  syncNow(): void {
    if (this.fd >= 0 && !this.closed) fdatasyncSync(this.fd)
    this.dirty = false
  }

  /** Sequential reader starting at `fromSeq` (records before it are skipped). */
  reader(fromSeq: number): WalReader {
    return new WalReader(this, fromSeq)
  }

  locate(seq: number): Segment | null {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const s = this.segments[i]
      if (s.firstSeq <= seq) return seq <= s.lastSeq ? s : null
    }
    return null
  }

  validBytes(segment: Segment): number {
    return segment.size
  }

  /** The segments as they stand (for readers in another thread). */
  snapshot(): Segment[] {
    return this.segments.map((s) => ({ ...s }))
  }

  /** Every consumer has passed `throughSeq`: recycle the segments wholly before it. */
  release(throughSeq: number): void {
    const before = this.segments.length
    while (this.segments.length > 1 && this.segments[0].lastSeq <= throughSeq) {
      const done = this.segments.shift()!
      if (done.lastSeq > this.wipeThroughSeq && this.spares.length < (this.options.spares ?? 2) + 1) {
        const spare = join(this.options.dir, `spare-${++this.spareCounter}.seg`)
        renameSync(done.path, spare)
        this.spares.push(spare)
        this.recycled.add(spare)
      } else {
        unlinkSync(done.path)
      }
    }
    if (this.segments.length !== before) this.options.onSegmentsChanged?.()
  }

  /**
   * What is logged so far must not stay readable once every consumer has passed it (a person's erasure): those
   * segments are deleted rather than recycled when released, the active one is closed so that it can be, and
   * spares that were segments go now.
   */
  forgetLogged(): Promise<void> {
    // between two groups of the writer: a group in flight is writing into the active segment
    return new Promise((resolve, reject) =>
      this.writer.whenBetweenGroups(() => {
        try {
          this.forgetLoggedNow()
          resolve()
        } catch (error) {
          reject(error)
        }
      }),
    )
  }

  private forgetLoggedNow(): void {
    if (this.closed) return
    this.wipeThroughSeq = this.lastSeq
    for (const spare of this.spares.filter((s) => this.recycled.has(s))) {
      this.spares.splice(this.spares.indexOf(spare), 1)
      this.recycled.delete(spare)
      unlinkSync(spare)
    }
    // an empty active segment may be a recycled one: its old records lie past where appends resume
    if (this.active.size > 0) this.roll()
    else ftruncateSync(this.fd, 0)
  }

  /** The active segment's first sequence number and written size (published to the flush worker). */
  get activeExtent(): { firstSeq: number; size: number } {
    const a = this.active
    return { firstSeq: a.firstSeq, size: a.size }
  }

  async close(): Promise<void> {
    if (this.closed) return
    // what capture handed over is written first (its requests are waiting for it)
    await this.writer.settled()
    clearInterval(this.syncTimer)
    // no spare is started from now on; the one being prepared (which would start the next) is waited for
    this.closing = true
    while (this.preparing) await this.preparing
    this.closed = true
    if (this.fd >= 0) {
      fdatasyncSync(this.fd)
      closeSync(this.fd)
      this.fd = -1
    }
    for (const f of this.syncFailures) f(new WalWriteError('log closed', 'ECLOSED'))
    this.syncWaiters = []
    this.syncFailures = []
  }
}

