// The rollout / variant / holdout hash of PostHog:
//   int(sha1_hex(s)[0:15], 16) / float(0xFFFFFFFFFFFFFFF)
//
// 15 hex digits are 60 bits, more than a double holds exactly. Python converts the 60-bit int to the
// nearest double (round half to even) and divides by float(0xFFFFFFFFFFFFFFF), which is exactly 2**60.
// We build the same double without BigInt: the top 32 bits times 2**28 is exact, the low 28 bits are
// exact, and one IEEE addition of two exact operands is correctly rounded (half to even) — the same
// single rounding Python performs. Dividing by a power of two is exact.
import { createHash } from 'node:crypto'

const TWO_POW_28 = 268435456
const LONG_SCALE = 0xfffffffffffffff // as a double this is 2**60, like Python's float(0xFFFFFFFFFFFFFFF)

type Sha1 = (s: string) => Uint8Array

function pickSha1(): Sha1 {
  const bun = (globalThis as { Bun?: { SHA1?: { hash?: (s: string) => unknown } } }).Bun
  const fast = bun?.SHA1?.hash as ((s: string, into?: Uint8Array) => unknown) | undefined
  if (typeof fast === 'function') {
    // into one reused buffer: no allocation per hash (hashString reads it before the next call)
    const digest = new Uint8Array(20)
    return (s: string) => {
      fast(s, digest)
      return digest
    }
  }
  return (s: string) => createHash('sha1').update(s, 'utf8').digest()
}

const sha1 = pickSha1()

/** The hash of an already assembled string, in [0, 1]. Strings are hashed as UTF-8. */
export function hashString(s: string): number {
  const d = sha1(s)
  const hi = ((d[0]! << 24) | (d[1]! << 16) | (d[2]! << 8) | d[3]!) >>> 0
  const lo = ((d[4]! << 24) | (d[5]! << 16) | (d[6]! << 8) | d[7]!) >>> 0
  return (hi * TWO_POW_28 + (lo >>> 4)) / LONG_SCALE
}

/** hash(`${key}.${identifier}${salt}`): rollout uses salt "", variants use salt "variant". */
export function flagHash(key: string, identifier: string, salt = ''): number {
  return hashString(`${key}.${identifier}${salt}`)
}

/** The holdout hash `holdout-${identifier}`; independent of the flag. */
export function holdoutHash(identifier: string): number {
  return hashString(`holdout-${identifier}`)
}
