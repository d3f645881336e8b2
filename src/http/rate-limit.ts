// Token buckets per key, in memory (per process): a burst of `perWindow`, refilled evenly over the window.
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()

  constructor(
    private readonly perWindow: number,
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  get enabled(): boolean {
    return this.perWindow > 0
  }

  /** 0 when allowed; otherwise the seconds to wait before trying again. */
  take(key: string, now = Date.now()): number {
    if (this.perWindow <= 0) return 0
    const rate = this.perWindow / this.windowMs
    let bucket = this.buckets.get(key)
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!)
      bucket = { tokens: this.perWindow, at: now }
      this.buckets.set(key, bucket)
    } else {
      bucket.tokens = Math.min(this.perWindow, bucket.tokens + (now - bucket.at) * rate)
      bucket.at = now
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return 0
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / rate / 1000))
  }
}
