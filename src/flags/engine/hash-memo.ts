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

/**
 * A project's active flags as the flag cache last built them: each flag has an index in it, so an identifier's
 * hashes of those flags are also kept in two arrays (read by index: a 500-flag request made 700 map lookups).
 */
export interface MemoTable {
  readonly size: number
}

/** what the two arrays cost an identifier, per flag of the table */
const SLOT_BYTES = 16

/** One identifier's remembered hashes: found once per request (`entry`), then read and added to per flag. */
export interface MemoEntry {
  readonly identifier: string
  bytes: number
  /** false once evicted: what it holds stays right (hashes are pure), but adding to it no longer counts */
  live: boolean
  readonly rollout: Map<string, number>
  readonly variant: Map<string, number>
  holdout: number | undefined
  /** the table the arrays below are for (one at a time: an identifier seen in another project switches them) */
  table: MemoTable | null
  /** hashes by the table's index, NaN where not known yet (the maps above stay the record: the arrays are a view) */
  rolloutSlots: Float64Array
  variantSlots: Float64Array
}

const NO_SLOTS = new Float64Array(0)

/** The hash an entry remembers for `<hashPrefix><identifier>[variant]` (or its holdout hash), or undefined. */
export function rememberedHash(entry: MemoEntry, kind: HashKind, hashPrefix: string): number | undefined {
  return kind === 'holdout' ? entry.holdout : (kind === 'rollout' ? entry.rollout : entry.variant).get(hashPrefix)
}

export class HashMemo {
  private readonly byIdentifier = new Map<string, MemoEntry>()
  private total = 0

  /** @param maxBytes the budget; 0 remembers nothing */
  constructor(readonly maxBytes: number) {}

  get size(): { bytes: number; identifiers: number } {
    return { bytes: this.total, identifiers: this.byIdentifier.size }
  }

  /**
   * The hash remembered for `<hashPrefix><identifier>[variant]` (`hashPrefix` is `<flag key>.`; the holdout hash, on
   * `holdout-<identifier>`, is the kind `holdout` with any prefix), or undefined.
   */
  get(kind: HashKind, hashPrefix: string, identifier: string): number | undefined {
    const entry = this.maxBytes > 0 ? this.byIdentifier.get(identifier) : undefined
    return entry === undefined ? undefined : rememberedHash(entry, kind, hashPrefix)
  }

  set(kind: HashKind, hashPrefix: string, identifier: string, hash: number): void {
    const entry = this.entry(identifier)
    if (entry !== undefined) this.remember(entry, kind, hashPrefix, hash)
  }

  /**
   * The identifier's entry, made when it has none (undefined: the memo is off, or the identifier alone is larger than
   * the budget). The evaluator takes it once for all the flags of a request that hash the same identifier.
   */
  entry(identifier: string): MemoEntry | undefined {
    if (this.maxBytes <= 0) return undefined
    const known = this.byIdentifier.get(identifier)
    if (known !== undefined) return known
    const bytes = IDENTIFIER_BYTES + identifier.length * 2
    if (bytes > this.maxBytes) return undefined
    const entry: MemoEntry = {
      identifier,
      bytes: 0,
      live: true,
      rollout: new Map(),
      variant: new Map(),
      holdout: undefined,
      table: null,
      rolloutSlots: NO_SLOTS,
      variantSlots: NO_SLOTS,
    }
    this.byIdentifier.set(identifier, entry)
    this.grow(entry, bytes)
    return entry
  }

  /** Adds a hash to an entry (kept while the entry is; an evicted one takes nothing more into the count). */
  remember(entry: MemoEntry, kind: HashKind, hashPrefix: string, hash: number): void {
    if (!entry.live) return
    if (kind === 'holdout') {
      if (entry.holdout !== undefined) return
      entry.holdout = hash
    } else {
      const map = kind === 'rollout' ? entry.rollout : entry.variant
      if (map.has(hashPrefix)) return
      map.set(hashPrefix, hash)
    }
    this.grow(entry, HASH_BYTES)
  }

  /**
   * Points the entry's arrays at `table` (empty, then filled as hashes are asked for), counted in the budget, once
   * they are worth it: when the entry already holds hashes for a quarter of the table's flags (the arrays then cost at
   * most about what its maps do). An identifier that hashes one flag of a 5,000-flag project keeps the maps alone (its
   * arrays would have been 80 KB); an evicted entry gets none. False: no arrays for this table (yet).
   */
  useTable(entry: MemoEntry, table: MemoTable): boolean {
    if (!entry.live || (entry.rollout.size + entry.variant.size) * 4 < table.size) return false
    const before = entry.rolloutSlots.length * SLOT_BYTES
    entry.table = table
    entry.rolloutSlots = new Float64Array(table.size).fill(Number.NaN)
    entry.variantSlots = new Float64Array(table.size).fill(Number.NaN)
    this.grow(entry, table.size * SLOT_BYTES - before)
    return entry.table === table
  }

  private grow(entry: MemoEntry, bytes: number): void {
    entry.bytes += bytes
    this.total += bytes
    if (this.total <= this.maxBytes) return
    // first in, first out (the entry growing included, last): a request that keeps adding past the budget evicts
    // others before itself
    for (const [identifier, oldest] of this.byIdentifier) {
      if (this.total <= this.maxBytes) break
      if (oldest === entry && this.byIdentifier.size > 1) continue
      this.evict(identifier, oldest)
    }
    if (this.total > this.maxBytes) this.evict(entry.identifier, entry)
  }

  private evict(identifier: string, entry: MemoEntry): void {
    if (this.byIdentifier.get(identifier) !== entry) return
    this.byIdentifier.delete(identifier)
    this.total -= entry.bytes
    entry.live = false
  }
}
