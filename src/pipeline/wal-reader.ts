// Reading the write-ahead log: record frames, and a sequential reader over any source of segments
// (the writer itself, or a view of it in the flush worker).
import { closeSync, openSync, readSync } from 'node:fs'

export const FRAME = 16
const MAX_RECORD = 1024 * 1024 * 1024

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
      const frame = readFrame(this.fd, this.offset, limit)
      if (!frame) return null
      if (frame.seq < this.seq) {
        // skipped (the caller had it from the ring): step over without reading the payload
        this.offset += FRAME + frame.length
        continue
      }
      if (frame.seq > this.seq) {
        this.close()
        return null
      }
      const payload = readPayload(this.fd, this.offset, frame)
      if (!payload) return null
      this.offset += FRAME + frame.length
      this.seq++
      return { seq: frame.seq, payload, size: FRAME + frame.length }
    }
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
    return true
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd)
    this.fd = -1
    this.segment = null
  }
}
