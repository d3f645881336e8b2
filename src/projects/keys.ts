// API keys: random base62 secrets with a kind prefix, stored only as "sha256$<hex>" and a short mask.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

function base62(bytes: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex')}`)
  let out = ''
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out
    n /= 62n
  }
  return out || '0'
}

/**
 * No real key is longer than this (PostHog's and ours are ~50 characters). A longer one is refused before it is
 * hashed, looked up or cached, so a presented key costs at most this many bytes in any cache.
 */
export const MAX_KEY_LENGTH = 100

export function plausibleKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_LENGTH
}

export type KeyKind = 'phc' | 'phx'

export function generateKey(kind: KeyKind): string {
  return `${kind}_${base62(randomBytes(32))}`
}

export function hashKey(key: string): string {
  return `sha256$${createHash('sha256').update(key, 'utf8').digest('hex')}`
}

export function maskKey(key: string): string {
  return key.length <= 8 ? `${key.slice(0, 4)}...` : `${key.slice(0, 4)}...${key.slice(-4)}`
}

/** Compare two stored hashes without leaking where they differ. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
