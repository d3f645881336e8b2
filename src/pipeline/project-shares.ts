// How many bytes of the write-ahead log each project has that the consumers have not finished, so that one
// project cannot take more than its share of the log (WAL_PROJECT_SHARE) and hold every other one at 503.
//
// Records are counted in runs of consecutive sequence numbers (at most RUN_RECORDS records or `runBytes` bytes
// each, or what arrived between two progress reports), each holding its bytes per project: the memory is a small
// map per run, not an entry per record, and a run is released once every consumer has passed its last record. A
// project's count may therefore lag the consumers by one run (conservative), which the byte bound keeps small: a run
// of thousands of records straddling a stalled consumer once held a project at its share (429) with a third of the
// log still free.
import { decodeRecord } from '../capture/record'
import type { WalReader, WalRecord } from './wal-reader'

const RUN_RECORDS = 4096

interface Run {
  lastSeq: number
  records: number
  total: number
  bytes: Map<number, number>
}

export class ProjectShares {
  /** `runBytes`: the bytes after which a run is closed (the most a project's count may lag the consumers by) */
  constructor(private readonly runBytes = Number.POSITIVE_INFINITY) {}

  private readonly runs: Run[] = []
  private open: Run | null = null
  private readonly totals = new Map<number, number>()

  /** Unfinished bytes of the project. */
  bytesOf(projectId: number): number {
    return this.totals.get(projectId) ?? 0
  }

  /** Projects with unfinished bytes, and the most any of them has (for the gauges). */
  summary(): { projects: number; largest: number } {
    let largest = 0
    for (const bytes of this.totals.values()) if (bytes > largest) largest = bytes
    return { projects: this.totals.size, largest }
  }

  /** Record `seq` of `projectId` weighs `bytes`. Sequence numbers only grow. */
  add(seq: number, projectId: number, bytes: number): void {
    let run = this.open
    if (!run || run.records >= RUN_RECORDS || run.total >= this.runBytes) {
      if (run) this.runs.push(run)
      run = this.open = { lastSeq: seq, records: 0, total: 0, bytes: new Map() }
    }
    run.lastSeq = seq
    run.records++
    run.total += bytes
    run.bytes.set(projectId, (run.bytes.get(projectId) ?? 0) + bytes)
    this.totals.set(projectId, (this.totals.get(projectId) ?? 0) + bytes)
  }

  /** Every consumer has finished the records through `throughSeq`. */
  release(throughSeq: number): void {
    while (this.runs.length > 0 && this.runs[0].lastSeq <= throughSeq) this.subtract(this.runs.shift()!)
    const open = this.open
    if (!open) return
    if (open.lastSeq <= throughSeq) {
      this.subtract(open)
      this.open = null
    } else {
      // what arrived since the last report is a run of its own, released as a whole once passed
      this.runs.push(open)
      this.open = null
    }
  }

  private subtract(run: Run): void {
    for (const [projectId, bytes] of run.bytes) {
      const left = (this.totals.get(projectId) ?? 0) - bytes
      if (left > 0) this.totals.set(projectId, left)
      else this.totals.delete(projectId)
    }
  }

  /**
   * Count what a previous process left in the log (after a restart): each record by its project, weighed as what
   * it decodes to when it says so cheaply (a gzip body's trailer), else by its size on disk. `each` sees every
   * record with that weight (the log's own backlog is rebuilt in the same pass: the log is read once).
   */
  recover(reader: WalReader, each?: (record: WalRecord, weight: number) => void): void {
    try {
      for (let record = reader.next(); record; record = reader.next()) {
        const { projectId, body } = projectAndBody(record.payload)
        const weight = Math.max(record.size, gzipSizeOf(body))
        this.add(record.seq, projectId, weight)
        each?.(record, weight)
      }
    } finally {
      reader.close()
    }
  }
}

const PROJECT_FIRST = /^\{"p":(\d+),/
const latin1 = new TextDecoder('latin1')

/** A logged record's project and body, without parsing the rest of its header (it starts with the project). */
function projectAndBody(payload: Uint8Array): { projectId: number; body: Uint8Array } {
  const headerLength = payload[0] | (payload[1] << 8) | (payload[2] << 16) | (payload[3] * 0x100_0000)
  const start = latin1.decode(payload.subarray(4, Math.min(4 + headerLength, 40)))
  const found = PROJECT_FIRST.exec(start)
  if (found) return { projectId: Number(found[1]), body: payload.subarray(4 + headerLength) }
  const { projectId, request } = decodeRecord(payload)
  return { projectId, body: request.body }
}

/** The decoded size a gzip body declares (its ISIZE trailer, modulo 4 GiB), 0 for anything else. */
function gzipSizeOf(body: Uint8Array): number {
  if (body.length < 18 || body[0] !== 0x1f || body[1] !== 0x8b) return 0
  const n = body.length
  return (body[n - 4] | (body[n - 3] << 8) | (body[n - 2] << 16)) + body[n - 1] * 0x100_0000
}
