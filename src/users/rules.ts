// The rules of console sign-in, free of I/O: session and CSRF tokens, cookies, the CSRF check and the password
// policy. Unit-tested in rules.test.ts. (The sign-in throttle counts in Postgres: throttle.ts.)
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { ApiError } from '../http/errors'

export const SESSION_COOKIE = 'phog_session'
export const CSRF_COOKIE = 'phog_csrftoken'
export const CSRF_HEADER = 'x-csrftoken'
/** A session unused this long is over (PostHog: two weeks). */
export const SESSION_IDLE_MS = 14 * 24 * 60 * 60 * 1000
/**
 * How long the browser keeps the cookies: as long as browsers allow (400 days), so that a console in daily use stays
 * signed in; the server ends the session itself after SESSION_IDLE_MS without use, at logout or a password change.
 */
export const COOKIE_MAX_AGE_S = 400 * 24 * 60 * 60
/** last_seen_at is written at most this often per session: a busy console is not a write per request. */
export const SESSION_TOUCH_MS = 10 * 60 * 1000
export const MIN_PASSWORD_LENGTH = 8
/** argon2 hashes its input whole: a megabyte "password" would be an expensive request. */
export const MAX_PASSWORD_LENGTH = 1024
export const MAX_EMAIL_LENGTH = 254
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

/** 32 random bytes, base64url: the session token and the CSRF token. */
export function newToken(): string {
  return randomBytes(32).toString('base64url')
}

export function plausibleToken(value: string | undefined): value is string {
  return value !== undefined && TOKEN_PATTERN.test(value)
}

export function hashToken(token: string): string {
  return `sha256$${createHash('sha256').update(token, 'utf8').digest('hex')}`
}

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Emails are compared case-insensitively, as people type them. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `Passwords must be at least ${MIN_PASSWORD_LENGTH} characters long.`
  if (password.length > MAX_PASSWORD_LENGTH) return `Passwords must be at most ${MAX_PASSWORD_LENGTH} characters long.`
  return null
}

/** The cookies of a Cookie header (the first of a repeated name wins); bounded: a header over 8 KB is ignored. */
export function parseCookies(header: string | null | undefined): Map<string, string> {
  const cookies = new Map<string, string>()
  if (!header || header.length > 8192) return cookies
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    const name = part.slice(0, eq).trim()
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim())
  }
  return cookies
}

export interface CookieOptions {
  secure: boolean
  /** seconds; 0 deletes the cookie */
  maxAgeSeconds: number
}

/** The session cookie: HttpOnly (no script reads it), SameSite=Lax (no other site's form or fetch sends it). */
export function sessionCookie(value: string, options: CookieOptions): string {
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${options.maxAgeSeconds}${options.secure ? '; Secure' : ''}`
}

/** The CSRF cookie is readable by the console's script, which echoes it in X-CSRFToken. */
export function csrfCookie(value: string, options: CookieOptions): string {
  return `${CSRF_COOKIE}=${value}; Path=/; SameSite=Lax; Max-Age=${options.maxAgeSeconds}${options.secure ? '; Secure' : ''}`
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export function changesSomething(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase())
}

export function csrfFailed(detail: string): ApiError {
  return new ApiError(403, 'authentication_error', 'csrf_failed', `CSRF Failed: ${detail}`)
}

/**
 * Django's rule for a cookie-authenticated request: a request that changes anything carries X-CSRFToken equal to
 * the phog_csrftoken cookie (a page on another site can neither read the cookie nor set the header). The token must
 * also be the one issued with this session, so a cookie planted from a sibling domain does not pass.
 */
export function checkCsrf(input: { method: string; cookie: string | undefined; header: string | null; sessionCsrfHash: string }): void {
  if (!changesSomething(input.method)) return
  if (!plausibleToken(input.cookie)) throw csrfFailed('CSRF cookie not set.')
  if (!input.header) throw csrfFailed('CSRF token missing.')
  if (!sameText(input.header, input.cookie)) throw csrfFailed('CSRF token incorrect.')
  if (!sameText(hashToken(input.cookie), input.sessionCsrfHash)) throw csrfFailed('CSRF token incorrect.')
}

export function sessionExpired(lastSeenAt: Date, now: number): boolean {
  return now - lastSeenAt.getTime() >= SESSION_IDLE_MS
}

export function needsTouch(lastSeenAt: Date, now: number): boolean {
  return now - lastSeenAt.getTime() >= SESSION_TOUCH_MS
}
