// What the log holds that not every consumer has finished: its bytes (against WAL_MAX_BYTES) and the events its
// requests carried, as /_ready's backlog and the gauges report them.
//
// Both are counted by sequence number, in runs of consecutive records, and a run leaves the count when the slowest
// consumer has passed its last record. Subtracting what each consumer finished since it started from what was
// accepted (the earlier way) drifted: consumers restarted at different checkpoints each counted from their own
// place, so an idle log kept megabytes "unflushed" with no record left, and what a previous process accepted was
// never counted as events at all while it was replayed.
//
// The runs still waiting are saved beside the log (once a second and at close) so that a restart knows the events
// of what it replays without decoding it; what the saved tally does not cover (accepted in the last second before
// a crash, or a run the slowest consumer had started) is decoded and counted.
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { rename, writeFile } from 'node:fs/promises'
import type { WalRecord } from './wal-reader'

export interface BacklogRun {
  firstSeq: number
  lastSeq: number
  /** bytes on disk, frames included: how a saved run is checked against the log it claims to describe */
  disk: number
  /** bytes against the log's cap: each record the larger of its size on disk and what it decodes to */
  bytes: number
  /** events the requests carried */
  items: number
}

/** A run is closed after this many records, as well as at `runBytes` and at each progress report. */
const RUN_RECORDS = 4096
/** Past this many runs, adjacent small ones are merged: the saved tally and the memory stay small. */
export const MAX_RUNS = 1024

export class Backlog {
  private runs: BacklogRun[] = []
  private open: BacklogRun | null = null
  private openRecords = 0
  private totalBytes = 0
  private totalItems = 0
  /** changed since last saved */
  dirty = false

  /** `runBytes`: the most the count may lag the slowest consumer by (a run is released whole) */
  constructor(private readonly runBytes = Number.POSITIVE_INFINITY) {}

  /** Bytes of records not every consumer has finished. */
  get bytes(): number {
    return this.totalBytes
  }

  /** Events of those records. */
  get items(): number {
    return this.totalItems
  }

  /** Record `seq` was accepted. Sequence numbers only grow. */
  add(seq: number, disk: number, bytes: number, items: number): void {
    let run = this.open
    if (!run || this.openRecords >= RUN_RECORDS || run.bytes >= this.runBytes) {
      if (run) this.seal(run)
      run = this.open = { firstSeq: seq, lastSeq: seq, disk: 0, bytes: 0, items: 0 }
      this.openRecords = 0
    }
    run.lastSeq = seq
    run.disk += disk
    run.bytes += bytes
    run.items += items
    this.openRecords++
    this.totalBytes += bytes
    this.totalItems += items
    this.dirty = true
  }

  /** A run counted as a whole (recovered from the saved tally). */
  addRun(run: BacklogRun): void {
    if (this.open) this.seal(this.open)
    this.open = null
    this.seal({ ...run })
    this.totalBytes += run.bytes
    this.totalItems += run.items
    this.dirty = true
  }

  /** Every consumer has finished the records through `throughSeq`. */
  release(throughSeq: number): void {
    const open = this.open
    if (open) {
      // what arrived since the last report is a run of its own, released whole once passed
      this.seal(open)
      this.open = null
    }
    let released = 0
    while (released < this.runs.length && this.runs[released]!.lastSeq <= throughSeq) {
      const run = this.runs[released++]!
      this.totalBytes -= run.bytes
      this.totalItems -= run.items
    }
    if (released > 0) {
      this.runs = this.runs.slice(released)
      this.dirty = true
    }
    if (this.runs.length === 0) {
      // exactly 0 when nothing waits, whatever rounding the weights went through
      this.totalBytes = 0
      this.totalItems = 0
    }
  }

  private seal(run: BacklogRun): void {
    this.runs.push(run)
    if (this.runs.length > MAX_RUNS) this.merge()
  }

  /**
   * Adjacent runs merged while together within 4/MAX_RUNS of all the bytes waiting: afterwards any two neighbours
   * hold more than that, so at most MAX_RUNS / 2 + 1 runs remain, and a merged run holds no more than 1/256 of the
   * backlog (within the log's cap, no more than the byte bound a run is closed at).
   */
  private merge(): void {
    const within = (4 * this.totalBytes) / MAX_RUNS
    const merged: BacklogRun[] = []
    for (const run of this.runs) {
      const last = merged[merged.length - 1]
      if (last && last.bytes + run.bytes <= within) joinInto(last, run)
      else merged.push({ ...run })
    }
    this.runs = merged
  }

  /** The runs still waiting, oldest first (what is saved). */
  waiting(): BacklogRun[] {
    return this.open ? [...this.runs, this.open] : [...this.runs]
  }
}

function joinInto(into: BacklogRun, next: BacklogRun): void {
  into.lastSeq = next.lastSeq
  into.disk += next.disk
  into.bytes += next.bytes
  into.items += next.items
}

/**
 * Rebuild the count of a log after a restart, from its records still waiting (read in order from the slowest
 * consumer's place, `fromSeq`) and the tally the previous process saved. A saved run is taken as it is when the
 * slowest consumer had not started it and the records found for it weigh what it says on disk; every other record
 * is counted by `itemsOf` (its request decoded), weighed by `weightOf`.
 */
export class BacklogRecovery {
  private next = 0
  /** the saved run being matched against the records read, and those records */
  private candidate: { run: BacklogRun; disk: number; records: { record: WalRecord; weight: number }[] } | null = null

  constructor(
    private readonly backlog: Backlog,
    private readonly saved: BacklogRun[],
    private readonly fromSeq: number,
    private readonly itemsOf: (record: WalRecord) => number,
  ) {}

  /** The next record still waiting, and its weight against the cap as far as it can be told without decoding. */
  record(record: WalRecord, weight: number): void {
    const seq = record.seq
    while (this.next < this.saved.length && this.saved[this.next]!.lastSeq < seq) this.next++
    const run = this.saved[this.next]
    if (!this.candidate && run && run.firstSeq === seq && run.firstSeq >= this.fromSeq) {
      this.candidate = { run, disk: 0, records: [] }
    }
    const candidate = this.candidate
    if (!candidate) {
      this.backlog.add(seq, record.size, weight, this.itemsOf(record))
      return
    }
    candidate.disk += record.size
    candidate.records.push({ record, weight })
    if (seq === candidate.run.lastSeq) this.settle()
  }

  /** The log is read: a run it ended inside of is counted record by record. */
  finish(): void {
    if (this.candidate) this.settle()
  }

  private settle(): void {
    const { run, disk, records } = this.candidate!
    this.candidate = null
    const last = records[records.length - 1]!.record.seq
    if (last === run.lastSeq && disk === run.disk) return this.backlog.addRun(run)
    for (const { record, weight } of records) this.backlog.add(record.seq, record.size, weight, this.itemsOf(record))
  }
}

/** The tally a previous process saved beside the log, or nothing (none, or unreadable: every record is counted). */
export function readSavedBacklog(path: string): BacklogRun[] {
  if (!existsSync(path)) return []
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { runs?: unknown }
    if (!Array.isArray(parsed.runs)) return []
    const runs: BacklogRun[] = []
    let after = 0
    for (const entry of parsed.runs) {
      if (!Array.isArray(entry) || entry.length !== 5 || !entry.every((n) => Number.isSafeInteger(n) && n >= 0)) return []
      const [firstSeq, lastSeq, disk, bytes, items] = entry as number[]
      // in order and not overlapping, or not trusted at all
      if (firstSeq! <= after || lastSeq! < firstSeq!) return []
      runs.push({ firstSeq: firstSeq!, lastSeq: lastSeq!, disk: disk!, bytes: bytes!, items: items! })
      after = lastSeq!
    }
    return runs
  } catch {
    return []
  }
}

function savedText(runs: BacklogRun[]): string {
  return JSON.stringify({ runs: runs.map((r) => [r.firstSeq, r.lastSeq, r.disk, r.bytes, r.items]) })
}

/**
 * Save the tally beside the log, off the request thread (a temporary file renamed over the old one: a crash
 * leaves one or the other whole). Not synced: a tally older than the log only leaves more records to decode.
 */
export async function saveBacklog(path: string, runs: BacklogRun[]): Promise<void> {
  await writeFile(`${path}.tmp`, savedText(runs))
  await rename(`${path}.tmp`, path)
}

/** The same, at once (at close). */
export function saveBacklogNow(path: string, runs: BacklogRun[]): void {
  const fd = openSync(`${path}.tmp`, 'w')
  try {
    writeSync(fd, savedText(runs))
  } finally {
    closeSync(fd)
  }
  renameSync(`${path}.tmp`, path)
}
