import { describe, expect, test } from 'bun:test'
import { clientIp, corsHeaders, preflightHeaders } from './cors'

const request = (headers: Record<string, string> = {}) => new Request('http://localhost/e/', { method: 'POST', headers })

describe('client address', () => {
  test('is the socket peer, IPv4-mapped IPv6 unwrapped', () => {
    expect(clientIp(request(), '203.0.113.9', false)).toBe('203.0.113.9')
    expect(clientIp(request(), '::ffff:203.0.113.9', false)).toBe('203.0.113.9')
    expect(clientIp(request(), '2001:db8::1', false)).toBe('2001:db8::1')
    expect(clientIp(request(), null, false)).toBeNull()
  })

  test('ignores X-Forwarded-For unless the proxy is trusted, so clients cannot forge it', () => {
    expect(clientIp(request({ 'x-forwarded-for': '198.51.100.7' }), '10.0.0.2', false)).toBe('10.0.0.2')
  })

  test('behind a trusted proxy is the first X-Forwarded-For entry, without a port', () => {
    // the proxy appends the address it saw: a client-supplied first entry is never taken
    expect(clientIp(request({ 'x-forwarded-for': '198.51.100.7, 10.0.0.1' }), '10.0.0.2', true)).toBe('10.0.0.1')
    expect(clientIp(request({ 'x-forwarded-for': '1.2.3.4, 198.51.100.9' }), '10.0.0.2', true)).toBe('198.51.100.9')
    // two proxies of yours (a CDN, then a load balancer): the entry the outer one appended
    expect(clientIp(request({ 'x-forwarded-for': '1.2.3.4, 198.51.100.9, 10.0.0.1' }), '10.0.0.2', 2)).toBe('198.51.100.9')
    expect(clientIp(request({ 'x-forwarded-for': '198.51.100.9' }), '10.0.0.2', 2)).toBe('198.51.100.9')
    expect(clientIp(request({ 'x-forwarded-for': '198.51.100.7:51234' }), '10.0.0.2', true)).toBe('198.51.100.7')
    expect(clientIp(request({ 'x-forwarded-for': '2001:db8::7' }), '10.0.0.2', true)).toBe('2001:db8::7')
    // no header: the peer
    expect(clientIp(request(), '10.0.0.2', true)).toBe('10.0.0.2')
  })
})

describe('CORS', () => {
  test('mirrors the origin with credentials allowed, * without one', () => {
    expect(corsHeaders(request({ origin: 'https://shop.example' }))).toEqual({
      'access-control-allow-origin': 'https://shop.example',
      'access-control-allow-credentials': 'true',
      vary: 'Origin',
    })
    expect(corsHeaders(request())['access-control-allow-origin']).toBe('*')
  })

  test('a preflight mirrors the requested headers', () => {
    const h = preflightHeaders(request({ origin: 'https://shop.example', 'access-control-request-headers': 'content-type, x-custom' }))
    expect(h['access-control-allow-headers']).toBe('content-type, x-custom')
    expect(h['access-control-allow-methods']).toContain('POST')
  })
})

describe('public endpoints (CORS on every answer, errors included)', () => {
  test('capture, recordings, decide, flags and remote config, with or without a slash or query; nothing else', async () => {
    const { isPublicEndpoint } = await import('./cors')
    for (const path of ['/capture', '/capture/', '/batch/?x=1', '/e', '/i/v0/e/', '/track', '/engage/', '/s/', '/decide/?v=3', '/flags?v=2', '/array/phc_x/config.js']) {
      expect({ path, public: isPublicEndpoint(`http://h${path}`) }).toEqual({ path, public: true })
    }
    for (const path of ['/api/projects/', '/events', '/engagement', '/decidex', '/metrics', '/_health', '/swagger', '/']) {
      expect({ path, public: isPublicEndpoint(`http://h${path}`) }).toEqual({ path, public: false })
    }
  })
})
