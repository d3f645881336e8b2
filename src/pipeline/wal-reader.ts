// Reading the write-ahead log: record frames, and a sequential reader over any source of segments
// (the writer itself, or a view of it in the flush worker).
import { closeSync, openSync, readSync } from 'node:fs'

export const FRAME = 16
const MAX_RECORD = 1024 * 1024 * 1024
/** A sequential reader reads a segment this much at a time: one read for many records, not two for each. */
const READ_CHUNK = 1024 * 1024

export interface WalRecord {
  seq: number
  payload: Uint8Array
  /** bytes on disk, frame included */
  size: number
}

export interface Segment {
  firstSeq: number
  path: string
  /** bytes of valid records */
  size: number
  lastSeq: number
}

/** What a reader needs of the log. */
export interface WalSource {
  readonly lastSeq: number
  /** the oldest sequence number still held */
  readonly firstSeq: number
  /** the segment holding seq (null if released or not written yet) */
  locate(seq: number): Segment | null
  /** how many bytes of the segment hold records, now (the active one keeps growing) */
  validBytes(segment: Segment): number
}

interface Frame {
  seq: number
  length: number
  crc: number
  seqBytes: Buffer
}

/** The frame at `offset` of an open segment, or null where valid data ends. */
export function readFrame(fd: number, offset: number, limit: number): Frame | null {
  if (offset + FRAME > limit) return null
  const frame = Buffer.allocUnsafe(FRAME)
  if (readSync(fd, frame, 0, FRAME, offset) !== FRAME) return null
  const length = frame.readUInt32LE(0)
  const seq = frame.readUInt32LE(8) + frame.readUInt32LE(12) * 0x1_0000_0000
  if (seq === 0 || length > MAX_RECORD || offset + FRAME + length > limit) return null
  return { seq, length, crc: frame.readUInt32LE(4), seqBytes: frame.subarray(8, 16) }
}

/** The payload of a frame, or null if it fails its crc. */
function readPayload(fd: number, offset: number, frame: Frame): Uint8Array | null {
  const payload = Buffer.allocUnsafe(frame.length)
  if (frame.length > 0 && readSync(fd, payload, 0, frame.length, offset + FRAME) !== frame.length) return null
  const crc = Bun.hash.crc32(payload, Bun.hash.crc32(frame.seqBytes)) >>> 0
  return crc === frame.crc ? payload : null
}

/** The record at `offset` if it is valid and carries `expectSeq`. */
export function readRecordAt(fd: number, offset: number, limit: number, expectSeq: number): WalRecord | null {
  const frame = readFrame(fd, offset, limit)
  if (!frame || frame.seq !== expectSeq) return null
  const payload = readPayload(fd, offset, frame)
  return payload ? { seq: frame.seq, payload, size: FRAME + frame.length } : null
}

export class WalReader {
  private segment: Segment | null = null
  private fd = -1
  private offset = 0
  private seq: number
  /**
   * Bytes of the open segment read ahead, starting at file offset chunkAt. Only bytes below the segment's valid
   * extent are read, and those never change; each chunk is a new buffer, so payloads handed out stay intact.
   */
  private chunk: Buffer | null = null
  private chunkAt = 0

  constructor(
    private readonly wal: WalSource,
    fromSeq: number,
  ) {
    this.seq = fromSeq
  }

  /** The sequence number next() returns next. */
  get position(): number {
    return this.seq
  }

  /** The next record, or null when the reader has caught up with the writer. */
  next(): WalRecord | null {
    if (this.seq > this.wal.lastSeq) return null
    if (!this.segment || this.seq > this.segment.lastSeq || this.seq < this.segment.firstSeq) {
      if (!this.open()) return null
    }
    const segment = this.segment!
    // Asked on every read: a cached extent of the active segment would hide what was written since.
    const limit = this.wal.validBytes(segment)
    for (;;) {
      // the frame as readFrame() checks it: a length that fits, a sequence number that is not 0
      if (this.offset + FRAME > limit) return null
      const head = this.read(this.offset, FRAME, limit)
      if (!head) return null
      const length = head.readUInt32LE(0)
      const seq = head.readUInt32LE(8) + head.readUInt32LE(12) * 0x1_0000_0000
      if (seq === 0 || length > MAX_RECORD || this.offset + FRAME + length > limit) return null
      if (seq < this.seq) {
        // skipped (the caller had it from the ring): step over without reading the payload
        this.offset += FRAME + length
        continue
      }
      if (seq > this.seq) {
        this.close()
        return null
      }
      const payload = this.read(this.offset + FRAME, length, limit)
      if (!payload) return null
      const crc = Bun.hash.crc32(payload, Bun.hash.crc32(head.subarray(8, 16))) >>> 0
      if (crc !== head.readUInt32LE(4)) return null
      this.offset += FRAME + length
      this.seq++
      return { seq, payload, size: FRAME + length }
    }
  }

  /** `length` bytes at `offset` of the open segment, from the chunk read ahead or a new one (null: short read). */
  private read(offset: number, length: number, limit: number): Buffer | null {
    const chunk = this.chunk
    if (chunk && offset >= this.chunkAt && offset + length <= this.chunkAt + chunk.length) {
      return chunk.subarray(offset - this.chunkAt, offset - this.chunkAt + length)
    }
    const size = Math.max(length, Math.min(READ_CHUNK, limit - offset))
    const fresh = Buffer.allocUnsafe(size)
    const n = size > 0 ? readSync(this.fd, fresh, 0, size, offset) : 0
    if (n < length) return null
    this.chunk = fresh.subarray(0, n)
    this.chunkAt = offset
    return fresh.subarray(0, length)
  }

  /** Position the reader at `seq`; moving forward costs nothing until next() is called. */
  seek(seq: number): void {
    if (seq < this.seq) this.close()
    this.seq = seq
  }

  private open(): boolean {
    this.close()
    const found = this.wal.locate(this.seq)
    if (!found) return false
    this.segment = found
    this.fd = openSync(found.path, 'r')
    this.offset = 0
    this.chunk = null
    return true
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd)
    this.fd = -1
    this.segment = null
    this.chunk = null
  }
}
