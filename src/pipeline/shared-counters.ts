// Counters the capture thread publishes for the flush worker through shared memory: the newest sequence
// number, how far the active segment is written, and how many events were accepted. Polling these costs
// the capture path three stores per request instead of a message.
const LAST_SEQ = 0
const ACTIVE_FIRST_SEQ = 1
const ACTIVE_SIZE = 2
const ACCEPTED_ITEMS = 3
const SLOTS = 4

export class SharedCounters {
  private readonly view: Float64Array
  // Atomics order the plain Float64 stores: a reader that loads the new generation sees the values before it.
  private readonly generation: Int32Array

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(SLOTS * 8 + 8)) {
    this.view = new Float64Array(buffer, 0, SLOTS)
    this.generation = new Int32Array(buffer, SLOTS * 8, 2)
  }

  /** Reader side: acquire the latest published values. */
  sync(): number {
    return Atomics.load(this.generation, 0)
  }

  get lastSeq(): number {
    return this.view[LAST_SEQ]
  }

  get activeFirstSeq(): number {
    return this.view[ACTIVE_FIRST_SEQ]
  }

  get activeSize(): number {
    return this.view[ACTIVE_SIZE]
  }

  get acceptedItems(): number {
    return this.view[ACCEPTED_ITEMS]
  }

  /** Called after a record is fully written: the reader may then read up to it. */
  published(lastSeq: number, activeFirstSeq: number, activeSize: number, items: number): void {
    this.view[ACTIVE_FIRST_SEQ] = activeFirstSeq
    this.view[ACTIVE_SIZE] = activeSize
    this.view[ACCEPTED_ITEMS] += items
    this.view[LAST_SEQ] = lastSeq
    Atomics.add(this.generation, 0, 1)
  }

  setAccepted(items: number): void {
    this.view[ACCEPTED_ITEMS] = items
    Atomics.add(this.generation, 0, 1)
  }
}
