// The console as the server hands it out: / redirects, deep links get the page, assets are hashed and cached long,
// the page may talk to this host only, and the whole app stays under 300 KB of JavaScript before compression.
import { beforeAll, describe, expect, test } from 'bun:test'
import { fileURLToPath } from 'node:url'
import { buildConsole, type ConsoleBundle } from './bundle'
import { acceptsGzip, consoleRoutes } from './routes'

let bundle: ConsoleBundle
let app: ReturnType<typeof consoleRoutes>
beforeAll(async () => {
  bundle = await buildConsole()
  app = consoleRoutes({ build: async () => bundle })
})
const get = (path: string, headers: Record<string, string> = {}) => app.handle(new Request(`http://localhost${path}`, { headers }))

describe('console serving', () => {
  test('/ redirects to /console/', async () => {
    const r = await get('/')
    expect(r.status).toBe(302)
    expect(r.headers.get('location')).toBe('/console/')
  })

  test('every deep link answers the page, not cached, with a CSP that allows this host only', async () => {
    for (const path of ['/console', '/console/', '/console/flags/12', '/console/persons/a%20b', '/console/settings']) {
      const r = await get(path)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toContain('text/html')
      expect(r.headers.get('cache-control')).toBe('no-cache')
      const csp = r.headers.get('content-security-policy') ?? ''
      expect(csp).toContain("default-src 'self'")
      expect(csp).toContain("connect-src 'self'")
      expect(csp).not.toContain('unsafe-inline')
      const html = await r.text()
      expect(html).toContain('<div id="app">')
      // nothing from another host
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//)
    }
  })

  test('assets have content-hashed names and are cached for a year; an unknown one is 404', async () => {
    const html = await (await get('/console/')).text()
    const script = /src="\/console\/assets\/(main-[a-z0-9]+\.js)"/.exec(html)?.[1]
    const style = /href="\/console\/assets\/(main-[a-z0-9]+\.css)"/.exec(html)?.[1]
    expect(script).toBeTruthy()
    expect(style).toBeTruthy()
    const r = await get(`/console/assets/${script}`)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('javascript')
    expect(r.headers.get('cache-control')).toContain('immutable')
    expect((await get(`/console/assets/${style}`)).headers.get('content-type')).toContain('text/css')
    expect((await get('/console/assets/nothing-here.js')).status).toBe(404)
  })

  test('the bundle names no other host; the app code never writes HTML', async () => {
    const js = [...bundle.assets.entries()].filter(([name]) => name.endsWith('.js')).map(([, a]) => new TextDecoder().decode(a.body)).join('\n')
    // the only absolute URLs are the SVG, XHTML and MathML namespaces, and two links in the text of a deprecation
    // warning of the postcss that rrweb (the replay player) bundles: printed, never fetched
    const warningText = ['https://evilmartians.com', 'https://www.w3ctech.com']
    expect(js.match(/https?:\/\/[a-z0-9.-]+/gi)?.filter((u) => !u.endsWith('www.w3.org') && !warningText.includes(u)) ?? []).toEqual([])
    const root = fileURLToPath(new URL('../../console/', import.meta.url))
    let scanned = 0
    for (const file of new Bun.Glob('**/*.{ts,tsx}').scanSync(root)) {
      scanned++
      const source = await Bun.file(`${root}${file}`).text()
      expect({ file, sinks: source.match(/innerHTML|outerHTML|dangerouslySetInnerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/g) }).toEqual({ file, sinks: null })
    }
    expect(scanned).toBeGreaterThan(10)
  })

  test('the page and its assets are gzipped for a client that takes gzip (Vary: Accept-Encoding), as they are for one that does not', async () => {
    const html = await (await get('/console/')).text()
    const script = /src="\/console\/assets\/(main-[a-z0-9]+\.js)"/.exec(html)![1]
    for (const path of ['/console/', `/console/assets/${script}`]) {
      const plain = await get(path)
      expect(plain.headers.get('content-encoding')).toBeNull()
      expect(plain.headers.get('vary')).toBe('Accept-Encoding')
      const raw = new Uint8Array(await plain.arrayBuffer())
      const zipped = await get(path, { 'accept-encoding': 'gzip, deflate, br' })
      expect(zipped.headers.get('content-encoding')).toBe('gzip')
      expect(zipped.headers.get('vary')).toBe('Accept-Encoding')
      const body = new Uint8Array(await zipped.arrayBuffer())
      expect(body.byteLength).toBeLessThan(raw.byteLength)
      expect(Bun.gunzipSync(body)).toEqual(raw)
      // compressed once, at build: the same bytes every time
      expect(new Uint8Array(await (await get(path, { 'accept-encoding': 'gzip' })).arrayBuffer())).toEqual(body)
    }
    console.log(`console JS: ${bundle.scriptBytes} bytes raw, ${bundle.scriptGzipBytes} gzipped`)
  })

  test('Accept-Encoding: gzip unless refused with q=0', () => {
    expect(acceptsGzip('gzip')).toBe(true)
    expect(acceptsGzip('br;q=1.0, gzip;q=0.8')).toBe(true)
    expect(acceptsGzip('*')).toBe(true)
    expect(acceptsGzip('gzip;q=0')).toBe(false)
    expect(acceptsGzip('identity')).toBe(false)
    expect(acceptsGzip(null)).toBe(false)
    expect(acceptsGzip(`${'x,'.repeat(100_000)}gzip`)).toBe(false)
  })

  test('a favicon is served (the page names it; /favicon.ico answers too)', async () => {
    const html = await (await get('/console/')).text()
    expect(html).toContain('<link rel="icon" type="image/svg+xml" href="/console/favicon.svg">')
    for (const path of ['/console/favicon.svg', '/favicon.ico']) {
      const r = await get(path)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toBe('image/svg+xml')
      expect(await r.text()).toStartWith('<svg')
    }
  })

  test('the whole app (the replay player included) is under 300 KB of JavaScript gzipped', () => {
    expect(bundle.scriptBytes).toBeGreaterThan(0)
    expect(bundle.scriptGzipBytes).toBeLessThan(300 * 1024)
    expect(bundle.scriptGzipBytes).toBeLessThan(bundle.scriptBytes)
  })

  test('the Docker image carries the console sources it bundles', async () => {
    const dockerfile = await Bun.file(fileURLToPath(new URL('../../Dockerfile', import.meta.url))).text()
    expect(dockerfile).toContain('COPY console ./console')
  })
})
