// The sign-in throttle: an attempt is taken BEFORE the password is checked, in Postgres (so every process on it
// shares the count), by an upsert returning the new count; past the limit the attempt is refused (429) and given
// back. A right password gives its attempt back too, so the count is of wrong passwords (and checks in flight):
// however many arrive at once, at most `perEmail` of them are checked in a window. A success does not wipe earlier
// failures: guessing would otherwise be free for whoever knows one password.
import type { Sql } from 'postgres'
import { addressGroup } from '../http/address'
import { ApiError } from '../http/errors'
import { deleteStaleAttempts, returnAttempts, takeAttempts, type AttemptTaken } from './repository'

export interface ThrottleOptions {
  /** password checks per email in a window; the next attempt waits for the window's end (PostHog: 10 in 15 minutes) */
  perEmail?: number
  /** password checks per client address in a window (one address trying many emails); 0 = no limit */
  perAddress?: number
  windowMs?: number
  /** subjects remembered as refused (the 429s that cost no query); the oldest is forgotten first */
  maxEntries?: number
}

/** An address as a subject: bounded (X-Forwarded-For behind a trusted proxy is the client's to write). */
const MAX_SUBJECT_LENGTH = 300

export function subjectsOf(email: string, address: string | null, perAddress: number): string[] {
  const subjects = [`email:${email}`.slice(0, MAX_SUBJECT_LENGTH)]
  // an IPv6 client counted by its /64: it may have 2^64 addresses to try from
  if (address && perAddress > 0) subjects.push(`ip:${addressGroup(address)}`.slice(0, MAX_SUBJECT_LENGTH))
  return subjects
}

interface Limits {
  perEmail: number
  perAddress: number
}

export function pastLimit(taken: AttemptTaken, limits: Limits): boolean {
  return taken.attempts > (taken.subject.startsWith('ip:') ? limits.perAddress : limits.perEmail)
}

/** The seconds an attempt must wait when one of its counts is past its limit, else 0. */
export function waitAfter(taken: readonly AttemptTaken[], limits: Limits): number {
  let wait = 0
  for (const t of taken) if (pastLimit(t, limits)) wait = Math.max(wait, Math.max(1, Math.ceil(t.secondsLeft)))
  return wait
}

export function throttledSignIn(wait: number): ApiError {
  return new ApiError(429, 'throttled_error', 'throttled', `Too many failed sign-ins. Try again in ${wait} second${wait === 1 ? '' : 's'}.`, null, {
    'retry-after': String(wait),
  })
}

/** A password check the throttle allowed: `succeeded()` gives its attempt back. */
export interface Reservation {
  succeeded(): Promise<void>
}

export class LoginThrottle {
  readonly perEmail: number
  readonly perAddress: number
  readonly windowMs: number
  private readonly maxEntries: number
  /** subjects found past their limit, and until when: repeated refusals cost no query */
  private readonly refusedUntil = new Map<string, number>()
  private lastSweep = 0

  constructor(
    private readonly sql: Sql,
    options: ThrottleOptions = {},
  ) {
    this.perEmail = options.perEmail ?? 10
    this.perAddress = options.perAddress ?? 50
    this.windowMs = options.windowMs ?? 15 * 60 * 1000
    this.maxEntries = options.maxEntries ?? 20_000
  }

  /** Take an attempt for the email (and the address): 429 `throttled` past a limit, before any password is checked. */
  async reserve(email: string, address: string | null, now = Date.now()): Promise<Reservation> {
    const subjects = subjectsOf(email, address, this.perAddress)
    const known = Math.max(0, ...subjects.map((s) => (this.refusedUntil.get(s) ?? 0) - now))
    if (known > 0) throw throttledSignIn(Math.max(1, Math.ceil(known / 1000)))
    const taken = await takeAttempts(this.sql, subjects, this.windowMs)
    const wait = waitAfter(taken, this)
    if (wait > 0) {
      for (const t of taken) if (pastLimit(t, this)) this.remember(t.subject, now + wait * 1000)
      await returnAttempts(this.sql, taken)
      throw throttledSignIn(wait)
    }
    this.sweep(now)
    return { succeeded: () => returnAttempts(this.sql, taken) }
  }

  private remember(subject: string, until: number): void {
    this.refusedUntil.delete(subject)
    if (this.refusedUntil.size >= this.maxEntries) this.refusedUntil.delete(this.refusedUntil.keys().next().value!)
    this.refusedUntil.set(subject, until)
  }

  /** Windows that are over are deleted at most once a window, off the request path. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return
    this.lastSweep = now
    deleteStaleAttempts(this.sql, this.windowMs).catch(() => {
      this.lastSweep = 0
    })
  }
}
