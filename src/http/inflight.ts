// The process-wide budget of request-body bytes being received. A small body reserves its declared length before it
// is read, a larger or chunked one each chunk as it arrives (a client that declares 20 MB and sends nothing holds
// nothing), and gives it back when the read ends, however it ends: 48 clients each holding an unfinished 19.5 MB
// body took the process from 0.4 to 2.7 GB before this. Past the budget, or past one address's share of it, the
// request is answered 503 with Retry-After and nothing of it is accepted.

import { addressGroup } from './address'

/** One address (IPv6: its /64) may hold at most this fraction of the budget, so that a few clients cannot take it all. */
const ADDRESS_SHARE = 4
/**
 * Declared lengths reserved before their bytes arrive may hold at most this fraction: 1,024 connections declaring
 * 256 KiB and sending nothing held the whole budget, and every other body was refused until they timed out.
 */
const DECLARED_SHARE = 2

export interface InflightCounters {
  /** a refusal: `process` past the whole budget, `address` past one address's share */
  onRefused?(scope: 'process' | 'address'): void
  /** a small body read chunk by chunk: declared lengths held their share */
  onDeclaredFull?(): void
}

export class InflightBodies {
  private reserved = 0
  /** the part of `reserved` that is declared lengths, reserved before their bytes arrived */
  private declared = 0
  private readonly byAddress = new Map<string, number>()
  readonly addressShare: number
  readonly declaredShare: number

  constructor(
    readonly maxBytes: number,
    private readonly counters: InflightCounters = {},
  ) {
    this.addressShare = Math.floor(maxBytes / ADDRESS_SHARE)
    this.declaredShare = Math.floor(maxBytes / DECLARED_SHARE)
  }

  get reservedBytes(): number {
    return this.reserved
  }

  /**
   * Reserve `bytes` for `address` (null: an address we could not learn, counted under one key); false when refused.
   * `bodyHolds` is what the same body already reserved (its earlier chunks).
   */
  reserve(address: string | null, bytes: number, bodyHolds = 0): boolean {
    if (bytes <= 0) return true
    const key = address === null ? '' : addressGroup(address)
    const held = this.byAddress.get(key) ?? 0
    // a body is always let through when nothing else is being received, so that no single body within
    // MAX_BODY_BYTES is refused forever by a budget set below it
    if (this.reserved > bodyHolds && this.reserved + bytes > this.maxBytes) return this.refuse('process')
    if (held > bodyHolds && held + bytes > this.addressShare) return this.refuse('address')
    this.reserved += bytes
    this.byAddress.set(key, held + bytes)
    return true
  }

  /**
   * A small body's declared length, reserved before it arrives (released with `declared` true). `full` when declared
   * lengths already hold their share: the caller then reserves the body's bytes as they arrive, chunk by chunk.
   */
  reserveDeclared(address: string | null, bytes: number): 'reserved' | 'refused' | 'full' {
    if (bytes > 0 && this.declared > 0 && this.declared + bytes > this.declaredShare) {
      this.counters.onDeclaredFull?.()
      return 'full'
    }
    if (!this.reserve(address, bytes)) return 'refused'
    this.declared += Math.max(0, bytes)
    return 'reserved'
  }

  release(address: string | null, bytes: number, declared = false): void {
    if (bytes <= 0) return
    if (declared) this.declared = Math.max(0, this.declared - bytes)
    const key = address === null ? '' : addressGroup(address)
    const left = (this.byAddress.get(key) ?? 0) - bytes
    if (left > 0) this.byAddress.set(key, left)
    else this.byAddress.delete(key)
    this.reserved = Math.max(0, this.reserved - bytes)
  }

  private refuse(scope: 'process' | 'address'): false {
    this.counters.onRefused?.(scope)
    return false
  }
}
