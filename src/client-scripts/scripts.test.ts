// /static/<name>.js: the lazily loaded posthog-js scripts from the installed package, by name from the list of its
// files only, compressed once, with an ETag; the versioned form only for the installed version; 404 otherwise.
import { describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { gunzipSync, brotliDecompressSync } from 'node:zlib'
import { toErrorResponse } from '../http/errors'
import { acceptedEncodings, clientScriptRoutes } from './routes'
import { ClientScripts } from './scripts'

const scripts = ClientScripts.fromPackage()
const app = new Elysia()
  .onError(({ code, error, set }) => {
    const { status, body } = toErrorResponse(code, error)
    set.status = status
    return body
  })
  .use(clientScriptRoutes({ scripts }))
const get = (path: string, headers: Record<string, string> = {}) => app.handle(new Request(`http://localhost${path}`, { headers }))
const dist = join(dirname(createRequire(import.meta.url).resolve('posthog-js/package.json')), 'dist')
const original = (name: string) => readFileSync(join(dist, name))

describe('the scripts posthog-js loads lazily', () => {
  test('what posthog-js 1.449 and 1.201 ask for is there', () => {
    for (const name of ['lazy-recorder.js', 'recorder.js', 'surveys.js', 'exception-autocapture.js', 'web-vitals.js', 'dead-clicks-autocapture.js', 'tracing-headers.js', 'array.js']) {
      expect([name, scripts.has(name)]).toEqual([name, true])
    }
    expect(scripts.version).toBe(JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')).version)
    // only scripts: no source maps, no type declarations, nothing outside dist/
    expect(scripts.names().every((n) => /^[a-z0-9.-]+\.js$/.test(n))).toBe(true)
  })

  test('served byte for byte, brotli or gzip as accepted, with a week of caching and an ETag', async () => {
    const plain = await get('/static/lazy-recorder.js?v=1.449.2')
    expect(plain.status).toBe(200)
    expect(plain.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
    expect(plain.headers.get('cache-control')).toBe('public, max-age=604800')
    expect(plain.headers.get('content-encoding')).toBeNull()
    expect(Buffer.from(await plain.arrayBuffer()).equals(original('lazy-recorder.js'))).toBe(true)

    const gz = await get('/static/lazy-recorder.js?v=1.449.2', { 'accept-encoding': 'gzip, deflate' })
    expect(gz.headers.get('content-encoding')).toBe('gzip')
    const gzBytes = new Uint8Array(await gz.arrayBuffer())
    expect(Buffer.from(gunzipSync(gzBytes)).equals(original('lazy-recorder.js'))).toBe(true)
    expect(gzBytes.length).toBeLessThan(original('lazy-recorder.js').length / 2)

    const br = await get('/static/lazy-recorder.js', { 'accept-encoding': 'gzip, deflate, br' })
    expect(br.headers.get('content-encoding')).toBe('br')
    expect(Buffer.from(brotliDecompressSync(new Uint8Array(await br.arrayBuffer()))).equals(original('lazy-recorder.js'))).toBe(true)

    const etag = plain.headers.get('etag')!
    expect(etag).toMatch(/^"[\w-]+"$/)
    expect(br.headers.get('etag')).toBe(etag)
    const again = await get('/static/lazy-recorder.js?v=1.449.2', { 'if-none-match': etag })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe('')
  })

  test('an encoding refused with q=0 is not sent; If-None-Match: * is a 304', async () => {
    const noBrotli = await get('/static/array.js', { 'accept-encoding': 'br;q=0, gzip' })
    expect(noBrotli.headers.get('content-encoding')).toBe('gzip')
    expect(gunzipSync(Buffer.from(await noBrotli.arrayBuffer())).equals(original('array.js'))).toBe(true)
    expect((await get('/static/array.js', { 'accept-encoding': 'gzip;q=0, br;q=0.0' })).headers.get('content-encoding')).toBeNull()
    expect((await get('/static/array.js', { 'accept-encoding': 'GZIP ; q=0.5' })).headers.get('content-encoding')).toBe('gzip')
    expect([...acceptedEncodings('br;q=0, gzip;q=1, identity, x'.repeat(1000))].length).toBeLessThan(200)
    expect((await get('/static/array.js', { 'if-none-match': '*' })).status).toBe(304)
  })

  test('the versioned path serves the installed version only (posthog-js falls back to /static/<name>.js)', async () => {
    const same = await get(`/static/${scripts.version}/lazy-recorder.js`)
    expect(same.status).toBe(200)
    expect(Buffer.from(await same.arrayBuffer()).equals(original('lazy-recorder.js'))).toBe(true)
    expect((await get('/static/1.201.0/recorder.js')).status).toBe(404)
  })

  test('anything else is a 404, never a file from elsewhere', async () => {
    for (const path of [
      '/static/nope.js',
      '/static/lazy-recorder.js.map',
      '/static/lazy-recorder.d.ts',
      '/static/..%2Fpackage.json',
      '/static/../package.json',
      '/static/%2e%2e/%2e%2e/package.json',
      `/static/${scripts.version}/../../package.json`,
      '/static/module.full.cjs',
      `/static/${'a'.repeat(10_000)}.js`,
      '/static/',
    ]) {
      const r = await get(path)
      expect([path.slice(0, 80), r.status]).toEqual([path.slice(0, 80), 404])
    }
  })

  test('the same script asked for at once is read and compressed once', async () => {
    const fresh = ClientScripts.fromPackage()
    const [a, b] = await Promise.all([fresh.get('surveys.js'), fresh.get('surveys.js')])
    expect(a).toBe(b)
    expect(await fresh.get('surveys.js')).toBe(a)
  })
})
