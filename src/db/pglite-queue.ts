// pglite-socket's own queue interleaves protocol messages of different connections, so one connection's
// Bind can replace another's unnamed portal. This queue gives the database to one connection from its
// first message until the end of its exchange (Sync or a simple Query) and for as long as it holds a
// transaction open.
import type { PGlite } from '@electric-sql/pglite'

interface Pending {
  handlerId: number
  message: Uint8Array
  onData: (data: Uint8Array) => void
  resolve: (bytes: number) => void
  reject: (error: unknown) => void
}

const SYNC = 0x53 // 'S'
const SIMPLE_QUERY = 0x51 // 'Q'
const TERMINATE = 0x58 // 'X'
const PROTOCOL_V3 = 196608

function endsExchange(message: Uint8Array): boolean {
  if (message.length >= 8) {
    const view = new DataView(message.buffer, message.byteOffset, message.byteLength)
    if (view.getInt32(4) === PROTOCOL_V3) return true // startup packet
  }
  const type = message[0]
  return type === SYNC || type === SIMPLE_QUERY || type === TERMINATE
}

export class ExclusiveQueryQueue {
  private queue: Pending[] = []
  private owner: number | null = null
  private running = false
  /** work that must see no query between its steps (a copy of the files): the queue waits for it */
  private holding: Promise<void> | null = null
  /** exclusive work is waiting: no new exchange starts (the one in progress, or its transaction, ends first) */
  private wanted = 0

  /** `afterEach`: called once a message has run (the thread that hosts PGlite paces its collections by it) */
  constructor(
    private readonly db: PGlite,
    private readonly afterEach: () => void = () => undefined,
  ) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject })
      void this.run()
    })
  }

  getQueueLength(): number {
    return this.queue.length
  }

  clearQueueForHandler(handlerId: number): void {
    this.queue = this.queue.filter((p) => {
      if (p.handlerId !== handlerId) return true
      p.reject(new Error('connection closed'))
      return false
    })
  }

  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) return
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK')
    this.owner = null
    void this.run()
  }

  /**
   * Run `work` with the database to itself: once no connection holds an exchange or a transaction open, and with
   * nothing else run until it ends (a backup's copy of the data directory is then one state of it).
   */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.wanted++
    while (this.holding || this.running || this.owner !== null) await (this.holding ?? Bun.sleep(5))
    let release = () => undefined as void
    this.holding = new Promise<void>((done) => (release = done))
    this.wanted--
    try {
      return await work()
    } finally {
      this.holding = null
      release()
      void this.run()
    }
  }

  private next(): Pending | undefined {
    if (this.holding || (this.wanted > 0 && this.owner === null)) return undefined
    if (this.owner === null) return this.queue.shift()
    const index = this.queue.findIndex((p) => p.handlerId === this.owner)
    return index === -1 ? undefined : this.queue.splice(index, 1)[0]
  }

  private async run(): Promise<void> {
    if (this.running) return
    this.running = true
    try {
      for (let item = this.next(); item; item = this.next()) {
        this.owner = item.handlerId
        let bytes = 0
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length
                item.onData(data)
              },
            }),
          )
          item.resolve(bytes)
        } catch (error) {
          item.reject(error)
        }
        if (endsExchange(item.message) && !this.db.isInTransaction()) this.owner = null
        this.afterEach()
      }
    } finally {
      this.running = false
    }
  }
}
