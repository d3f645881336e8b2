// One generation of the window of recent uuids (recent-uuids.ts): (project, uuid) → the sequence number of the
// record holding it. Open addressing over typed arrays: 100,000 uuids are a few arrays of numbers rather than a
// Map of 100,000 strings for the collector to trace, a lookup builds no key text, and one that misses reads only
// a small array (measured: a miss-then-insert at a quarter to a half of a Map's cost). A uuid in the form
// normalisation gives it (36 characters, lower-case hex) is held as four 32-bit words; any other text, and a key
// that would sit too far from its slot, goes to an ordinary Map instead: uuids crafted to collide cost a Map's
// price, never a long probe.

/** Past this many slots from its home a key goes to the Map: every probe is bounded. */
const MAX_PROBE = 32
/** Words per key: the project, then the uuid's 128 bits. */
const WORDS = 5
const HEX_VALUE = new Int8Array(128).fill(-1)
for (let i = 0; i < 10; i++) HEX_VALUE[48 + i] = i
for (let i = 0; i < 6; i++) HEX_VALUE[97 + i] = 10 + i

/** The hash is salted per process, so that which uuids collide cannot be worked out from outside. */
const SALT = crypto.getRandomValues(new Int32Array(WORDS))

/** The (project, uuid) of one lookup, read once and used for each generation. */
export class UuidKey {
  readonly words = new Int32Array(WORDS)
  /** held as words (a canonical uuid and a 32-bit project), or else as text */
  asWords = false
  hash = 0
  private projectId = 0
  private uuid = ''

  read(projectId: number, uuid: string): this {
    this.projectId = projectId
    this.uuid = uuid
    const w = this.words
    this.asWords = (projectId | 0) === projectId && readUuid(uuid, w)
    if (!this.asWords) return this
    w[0] = projectId
    // murmur3's mixing of the salted words: spreads them over the slots
    let h = 0
    for (let i = 0; i < WORDS; i++) {
      let k = Math.imul(w[i] ^ SALT[i], 0xcc9e2d51)
      k = Math.imul((k << 15) | (k >>> 17), 0x1b873593)
      h ^= k
      h = (Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64) | 0
    }
    h ^= h >>> 16
    h = Math.imul(h, 0x85ebca6b)
    h ^= h >>> 13
    h = Math.imul(h, 0xc2b2ae35)
    this.hash = h ^ (h >>> 16)
    return this
  }

  /** The key as the Map beside the table holds it. */
  get text(): string {
    return `${this.projectId}:${this.uuid}`
  }
}

/** The 128 bits of a canonical lower-case uuid into words[1..4]; false for any other text. */
function readUuid(uuid: string, words: Int32Array): boolean {
  if (uuid.length !== 36 || uuid.charCodeAt(8) !== 45 || uuid.charCodeAt(13) !== 45 || uuid.charCodeAt(18) !== 45 || uuid.charCodeAt(23) !== 45) return false
  const a = hexDigits(uuid, 0, 8)
  const b = hexDigits(uuid, 9, 4)
  const c = hexDigits(uuid, 14, 4)
  const d = hexDigits(uuid, 19, 4)
  const e = hexDigits(uuid, 24, 4)
  const f = hexDigits(uuid, 28, 8)
  if (a < 0 || b < 0 || c < 0 || d < 0 || e < 0 || f < 0) return false
  words[1] = a
  words[2] = (b << 16) | c
  words[3] = (d << 16) | e
  words[4] = f
  return true
}

/** The value of `n` (at most 8) lower-case hex digits at `from`, or -1. */
function hexDigits(text: string, from: number, n: number): number {
  let value = 0
  for (let i = from; i < from + n; i++) {
    const c = text.charCodeAt(i)
    const v = c < 128 ? HEX_VALUE[c] : -1
    if (v < 0) return -1
    value = value * 16 + v
  }
  return value
}

/** A byte of the hash the slot does not come from (its top bits), never 0. */
const fingerprintOf = (hash: number) => hash & 0xff || 1

/**
 * The slots hold only a one-byte fingerprint of their key (0 marks an empty slot) and where the key was appended: a
 * lookup that misses, the usual case, reads only the fingerprints (256 KB for 100,000 keys, small enough to stay in
 * cache: measured, half the cost of 32-bit ones), and compares a whole key only when a fingerprint matches. Keys are
 * appended in the order they come, which writes memory in sequence instead of at random.
 */
export class UuidTable {
  private readonly shift: number
  private readonly mask: number
  private readonly fingerprints: Uint8Array
  private readonly entries: Int32Array
  private readonly words: Int32Array
  private readonly seqs: Float64Array
  private readonly others = new Map<string, number>()
  /** keys held as words */
  private appended = 0
  private count = 0

  /** Room for `capacity` keys, with the slots at most half full: about 41 bytes a key (4.1 MB for 100,000). */
  constructor(
    capacity: number,
    private readonly maxProbe = MAX_PROBE,
  ) {
    let bits = 4
    while (1 << bits < capacity * 2) bits++
    this.shift = 32 - bits
    this.mask = (1 << bits) - 1
    this.fingerprints = new Uint8Array(1 << bits)
    this.entries = new Int32Array(1 << bits)
    this.words = new Int32Array(Math.max(1, capacity) * WORDS)
    this.seqs = new Float64Array(Math.max(1, capacity))
  }

  get size(): number {
    return this.count
  }

  get(key: UuidKey): number | undefined {
    if (!key.asWords) return this.others.get(key.text)
    const entry = this.find(key)
    if (entry >= 0) return this.seqs[entry]
    return this.others.size > 0 ? this.others.get(key.text) : undefined
  }

  /** Hold a key that get() did not find. */
  set(key: UuidKey, seq: number): void {
    this.count++
    if (!key.asWords || this.appended === this.seqs.length) {
      this.others.set(key.text, seq)
      return
    }
    const { fingerprints, mask } = this
    let slot = key.hash >>> this.shift
    for (let probe = 0; probe < this.maxProbe; probe++, slot = (slot + 1) & mask) {
      if (fingerprints[slot] !== 0) continue
      const entry = this.appended++
      fingerprints[slot] = fingerprintOf(key.hash)
      this.entries[slot] = entry
      const at = entry * WORDS
      for (let i = 0; i < WORDS; i++) this.words[at + i] = key.words[i]
      this.seqs[entry] = seq
      return
    }
    this.others.set(key.text, seq)
  }

  /** Where the key was appended, or -1: stops at an empty slot or after maxProbe slots. */
  private find(key: UuidKey): number {
    const { fingerprints, mask } = this
    const fingerprint = fingerprintOf(key.hash)
    let slot = key.hash >>> this.shift
    for (let probe = 0; probe < this.maxProbe; probe++, slot = (slot + 1) & mask) {
      const f = fingerprints[slot]
      if (f === 0) return -1
      if (f === fingerprint && this.holds(this.entries[slot], key.words)) return this.entries[slot]
    }
    return -1
  }

  private holds(entry: number, w: Int32Array): boolean {
    const { words } = this
    const at = entry * WORDS
    return words[at] === w[0] && words[at + 1] === w[1] && words[at + 2] === w[2] && words[at + 3] === w[3] && words[at + 4] === w[4]
  }
}
