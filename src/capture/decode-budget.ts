// What decoding refused capture bodies may cost one client address: decoded bytes per second, as a token bucket
// that may go into debt by one request. A body's key is known only once it is decoded (posthog-js puts it inside),
// so an address sending bodies that expand to megabytes under unknown keys would otherwise buy the request thread's
// time for nothing; past its budget, its next request is answered 429 before anything is decoded. Accepted bodies
// are not charged: a client whose requests are accepted never meets this budget.

export class DecodeBudget {
  private readonly buckets = new Map<string, { bytes: number; at: number }>()

  /** `bytesPerSecond` 0: no budget. A full bucket holds one second's worth. */
  constructor(
    private readonly bytesPerSecond: number,
    private readonly maxAddresses = 100_000,
  ) {}

  /** 0 when the address may decode now; otherwise the seconds until it may. */
  waitSeconds(address: string, now = Date.now()): number {
    if (this.bytesPerSecond <= 0) return 0
    const bucket = this.refill(address, now)
    return bucket.bytes > 0 ? 0 : Math.max(1, Math.ceil(-bucket.bytes / this.bytesPerSecond))
  }

  /** The address decoded `bytes` (the bucket may go below zero: the next request waits until it is repaid). */
  charge(address: string, bytes: number, now = Date.now()): void {
    if (this.bytesPerSecond <= 0) return
    this.refill(address, now).bytes -= bytes
  }

  private refill(address: string, now: number): { bytes: number; at: number } {
    let bucket = this.buckets.get(address)
    if (!bucket) {
      if (this.buckets.size >= this.maxAddresses) this.buckets.delete(this.buckets.keys().next().value!)
      bucket = { bytes: this.bytesPerSecond, at: now }
      this.buckets.set(address, bucket)
    } else {
      bucket.bytes = Math.min(this.bytesPerSecond, bucket.bytes + ((now - bucket.at) * this.bytesPerSecond) / 1000)
      bucket.at = now
    }
    return bucket
  }
}
