// Where each consumer of the log has got to, on disk. Two 512-byte slots written alternately, each with a
// version and a crc, so a write torn by a crash leaves the previous state readable.
import { closeSync, existsSync, fdatasyncSync, fstatSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs'

const SLOT = 512

export interface CheckpointState {
  /** last sequence number each consumer has finished */
  done: Record<string, number>
  /** the store writer may have written up to here (an insert was in flight) */
  attempting: Record<string, number>
}

function readSlots(fd: number): { version: number; state: CheckpointState } {
  let version = 0
  let state: CheckpointState = { done: {}, attempting: {} }
  if (fstatSync(fd).size < SLOT) return { version, state }
  for (const slot of [0, 1]) {
    const buf = Buffer.alloc(SLOT)
    if (readSync(fd, buf, 0, SLOT, slot * SLOT) !== SLOT) continue
    const length = buf.readUInt16LE(0)
    const crc = buf.readUInt32LE(2)
    if (length === 0 || length > SLOT - 6) continue
    const body = buf.subarray(6, 6 + length)
    if (Bun.hash.crc32(body) >>> 0 !== crc) continue
    try {
      const parsed = JSON.parse(body.toString('utf8')) as { v: number; s: CheckpointState }
      if (parsed.v > version) {
        version = parsed.v
        state = { done: parsed.s.done ?? {}, attempting: parsed.s.attempting ?? {} }
      }
    } catch {
      // a damaged slot: the other one holds the previous state
    }
  }
  return { version, state }
}

export class Checkpoint {
  private version = 0
  private state: CheckpointState = { done: {}, attempting: {} }
  private readonly fd: number

  constructor(path: string) {
    if (!existsSync(path)) writeFileSync(path, Buffer.alloc(2 * SLOT))
    this.fd = openSync(path, 'r+')
    // Both slots exist on disk before the first update, so every update overwrites blocks the file already has:
    // on a full disk (the log fills it while a store is down) an update that had to grow the file failed with
    // ENOSPC, the store writer could never record an attempt, and the log, never released, stayed full.
    const size = fstatSync(this.fd).size
    if (size < 2 * SLOT) {
      writeSync(this.fd, Buffer.alloc(2 * SLOT - size), 0, 2 * SLOT - size, size)
      fdatasyncSync(this.fd)
    }
    this.load()
  }

  private load(): void {
    const { version, state } = readSlots(this.fd)
    this.version = version
    this.state = state
  }

  /** The state on disk, read without taking the file (the capture thread reads what the worker writes). */
  static read(path: string): CheckpointState {
    if (!existsSync(path)) return { done: {}, attempting: {} }
    const fd = openSync(path, 'r')
    try {
      return readSlots(fd).state
    } finally {
      closeSync(fd)
    }
  }

  get(): CheckpointState {
    return { done: { ...this.state.done }, attempting: { ...this.state.attempting } }
  }

  done(consumer: string): number {
    return this.state.done[consumer] ?? 0
  }

  attempting(consumer: string): number {
    return this.state.attempting[consumer] ?? 0
  }

  /** Record a change durably (fdatasync) before returning. */
  update(change: (state: CheckpointState) => void): void {
    const next = this.get()
    change(next)
    const version = this.version + 1
    const body = Buffer.from(JSON.stringify({ v: version, s: next }), 'utf8')
    if (body.length > SLOT - 6) throw new Error('checkpoint state too large')
    const buf = Buffer.alloc(SLOT)
    buf.writeUInt16LE(body.length, 0)
    buf.writeUInt32LE(Bun.hash.crc32(body) >>> 0, 2)
    body.copy(buf, 6)
    writeSync(this.fd, buf, 0, SLOT, (version % 2) * SLOT)
    fdatasyncSync(this.fd)
    this.version = version
    this.state = next
  }

  close(): void {
    closeSync(this.fd)
  }
}
