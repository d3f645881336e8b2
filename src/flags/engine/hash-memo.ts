// Rollout and variant hashes kept across requests. A hash is SHA-1 of `<flag key>.<identifier>[variant]`: a pure
// function of the flag's key and the identifier, the same in every project and every version of the flag. A
// returning user (the next page load, the next poll of a server SDK) asks for the same hashes again; with hundreds of
// flags, SHA-1 was a fifth of a /decide's time. Identifiers are remembered first in, first out, within a byte budget.

/**
 * What an identifier costs besides its text (its entry and two maps), and what one remembered hash costs (a map slot,
 * its key and a double, with the map's spare capacity): estimates measured on JavaScriptCore's heap after a
 * collection (`Bun.gc(true)`, `heapStats`): 2.0 KB an identifier with 10 hashes, 5.6 KB with 100, 82 bytes a hash
 * with 1,000. With these, a full 16 MiB memo held 0.6–1.1× its count on the heap (1 to 1,000 hashes an identifier).
 */
const IDENTIFIER_BYTES = 1024
const HASH_BYTES = 80

export type HashKind = 'rollout' | 'variant' | 'holdout'

interface Hashes {
  identifier: string
  bytes: number
  rollout: Map<string, number>
  variant: Map<string, number>
  holdout: number | undefined
}

export class HashMemo {
  private readonly byIdentifier = new Map<string, Hashes>()
  private total = 0
  /** the identifier asked for last: the flags of one request share it, so most lookups skip the outer map */
  private current: Hashes | null = null

  /** @param maxBytes the budget; 0 remembers nothing */
  constructor(readonly maxBytes: number) {}

  get size(): { bytes: number; identifiers: number } {
    return { bytes: this.total, identifiers: this.byIdentifier.size }
  }

  /**
   * The hash remembered for `<hashPrefix><identifier>[variant]` (`hashPrefix` is `<flag key>.`; the holdout hash, on
   * `holdout-<identifier>`, is the kind `holdout` with any prefix), or undefined. Plain lookups and stores, no
   * callbacks: a closure a hash cost more than the lookup.
   */
  get(kind: HashKind, hashPrefix: string, identifier: string): number | undefined {
    const hashes = this.hashesOf(identifier)
    if (hashes === undefined) return undefined
    return kind === 'holdout' ? hashes.holdout : (kind === 'rollout' ? hashes.rollout : hashes.variant).get(hashPrefix)
  }

  set(kind: HashKind, hashPrefix: string, identifier: string, hash: number): void {
    const hashes = this.hashesOf(identifier, true)
    if (hashes === undefined) return
    if (kind === 'holdout') {
      if (hashes.holdout !== undefined) return
      hashes.holdout = hash
    } else {
      const map = kind === 'rollout' ? hashes.rollout : hashes.variant
      if (map.has(hashPrefix)) return
      map.set(hashPrefix, hash)
    }
    this.grow(hashes, HASH_BYTES)
  }

  private hashesOf(identifier: string, create = false): Hashes | undefined {
    if (this.maxBytes <= 0) return undefined
    const last = this.current
    if (last !== null && last.identifier === identifier) return last
    let hashes = this.byIdentifier.get(identifier)
    if (hashes === undefined) {
      if (!create) return undefined
      const bytes = IDENTIFIER_BYTES + identifier.length * 2
      // an identifier larger than the whole budget is never remembered
      if (bytes > this.maxBytes) return undefined
      hashes = { identifier, bytes: 0, rollout: new Map(), variant: new Map(), holdout: undefined }
      this.byIdentifier.set(identifier, hashes)
      this.current = hashes
      this.grow(hashes, bytes)
      // the new entry may have been the one to go, when the budget holds less than one identifier's hashes
      if (this.current !== hashes) return undefined
    }
    this.current = hashes
    return hashes
  }

  private grow(hashes: Hashes, bytes: number): void {
    hashes.bytes += bytes
    this.total += bytes
    if (this.total <= this.maxBytes) return
    // first in, first out (the entry in use included, last): a request that keeps adding past the budget evicts
    // others before itself
    for (const [identifier, oldest] of this.byIdentifier) {
      if (this.total <= this.maxBytes) break
      if (oldest === hashes && this.byIdentifier.size > 1) continue
      this.evict(identifier, oldest)
    }
    if (this.total > this.maxBytes) this.evict(hashes.identifier, hashes)
  }

  private evict(identifier: string, hashes: Hashes): void {
    if (this.byIdentifier.get(identifier) !== hashes) return
    this.byIdentifier.delete(identifier)
    this.total -= hashes.bytes
    if (this.current === hashes) this.current = null
  }
}
