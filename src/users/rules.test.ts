import { describe, expect, test } from 'bun:test'
import { ApiError } from '../http/errors'
import {
  checkCsrf,
  csrfCookie,
  hashToken,
  needsTouch,
  newToken,
  parseCookies,
  passwordProblem,
  plausibleToken,
  SESSION_IDLE_MS,
  sessionCookie,
  sessionExpired,
} from './rules'

function refusal(fn: () => void): ApiError | null {
  try {
    fn()
    return null
  } catch (error) {
    return error as ApiError
  }
}

describe('session tokens and cookies', () => {
  test('tokens are 32 random bytes in base64url, and only such strings are looked up', () => {
    const a = newToken()
    expect(plausibleToken(a)).toBe(true)
    expect(a).not.toBe(newToken())
    expect(plausibleToken('x'.repeat(44))).toBe(false)
    expect(plausibleToken("' or 1=1 --" + 'x'.repeat(32))).toBe(false)
    expect(plausibleToken(undefined)).toBe(false)
    expect(hashToken(a)).toMatch(/^sha256\$[0-9a-f]{64}$/)
    expect(hashToken(a)).not.toContain(a)
  })

  test('the session cookie is HttpOnly and SameSite=Lax, Secure only behind https; the CSRF cookie is readable', () => {
    const plain = sessionCookie('v', { secure: false, maxAgeSeconds: 60 })
    expect(plain).toContain('HttpOnly')
    expect(plain).toContain('SameSite=Lax')
    expect(plain).not.toContain('Secure')
    expect(sessionCookie('v', { secure: true, maxAgeSeconds: 60 })).toContain('; Secure')
    const csrf = csrfCookie('c', { secure: false, maxAgeSeconds: 60 })
    expect(csrf).toStartWith('phog_csrftoken=c;')
    expect(csrf).not.toContain('HttpOnly')
  })

  test('cookies are parsed leniently, the first of a repeated name wins, and an oversized header is ignored', () => {
    const jar = parseCookies('a=1; phog_session=abc ;  phog_session=evil; junk; =x')
    expect(jar.get('a')).toBe('1')
    expect(jar.get('phog_session')).toBe('abc')
    expect(parseCookies(`phog_session=${'x'.repeat(9000)}`).size).toBe(0)
  })

  test('a session idle for 14 days is over; last use is written at most every 10 minutes', () => {
    const now = Date.now()
    expect(sessionExpired(new Date(now - SESSION_IDLE_MS + 1000), now)).toBe(false)
    expect(sessionExpired(new Date(now - SESSION_IDLE_MS), now)).toBe(true)
    expect(needsTouch(new Date(now - 60_000), now)).toBe(false)
    expect(needsTouch(new Date(now - 11 * 60_000), now)).toBe(true)
  })

  test('passwords have at least 8 characters and a bounded length', () => {
    expect(passwordProblem('1234567')).toContain('at least 8')
    expect(passwordProblem('12345678')).toBeNull()
    expect(passwordProblem('x'.repeat(5000))).toContain('at most')
  })
})

describe('CSRF rule', () => {
  const csrf = newToken()
  const sessionCsrfHash = hashToken(csrf)

  test('reads pass without the header', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) expect(refusal(() => checkCsrf({ method, cookie: undefined, header: null, sessionCsrfHash }))).toBeNull()
  })

  test('a write needs the header equal to the cookie, and the cookie issued with the session', () => {
    for (const method of ['POST', 'PATCH', 'PUT', 'DELETE']) {
      expect(refusal(() => checkCsrf({ method, cookie: csrf, header: csrf, sessionCsrfHash }))).toBeNull()
      const missing = refusal(() => checkCsrf({ method, cookie: csrf, header: null, sessionCsrfHash }))
      expect(missing?.status).toBe(403)
      expect(missing?.code).toBe('csrf_failed')
      expect(refusal(() => checkCsrf({ method, cookie: csrf, header: newToken(), sessionCsrfHash }))?.code).toBe('csrf_failed')
      expect(refusal(() => checkCsrf({ method, cookie: undefined, header: csrf, sessionCsrfHash }))?.code).toBe('csrf_failed')
    }
    // a cookie planted by a sibling domain, echoed in the header, is not this session's token
    const planted = newToken()
    expect(refusal(() => checkCsrf({ method: 'POST', cookie: planted, header: planted, sessionCsrfHash }))?.code).toBe('csrf_failed')
  })
})
