// posthog-js, unmodified, in headless Chromium, on a page of its own origin: the newest release (remote config,
// then /flags, events to /i/v0/e/) and 1.201.0 (the last that only calls /decide/ and /e/). Each body
// encoding the library can send is exercised; lz64, which current builds no longer send, with lz-string.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import LZString from 'lz-string'
import type { Browser, Page } from 'playwright-core'
import { launchBrowser, newPage, servePage } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'

let service: E2EService
let browser: Browser
beforeAll(async () => {
  ;[service, browser] = await Promise.all([startService(), launchBrowser()])
  const flag = await service.api('/api/projects/1/feature_flags/', {
    method: 'POST',
    json: {
      key: FLAG_KEY,
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: { variants: [{ key: 'red', rollout_percentage: 34 }, { key: 'green', rollout_percentage: 33 }, { key: 'blue', rollout_percentage: 33 }] },
      },
    },
  })
  expect(flag.status).toBe(201)
})

/** The variant the service gives this distinct id (what the page must end up showing). */
async function expectedVariant(distinctId: string): Promise<string> {
  const r = await fetch(`${service.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: distinctId }) })
  return String(((await r.json()) as { featureFlags: Record<string, unknown> }).featureFlags[FLAG_KEY])
}

/** The page shows the flag's value for the identified user (flags reload after identify). */
async function expectFlagShown(run: Run, user: string): Promise<void> {
  const expected = await expectedVariant(user)
  expect(['red', 'green', 'blue']).toContain(expected)
  const deadline = Date.now() + 15_000
  let shown = ''
  while (Date.now() < deadline) {
    shown = (await run.page.textContent('#flag')) ?? ''
    if (shown === expected) break
    await Bun.sleep(100)
  }
  expect(shown).toBe(expected)
}
afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

/** How many capture requests the service decoded with this encoding and carrier (from /metrics). */
async function decoded(encoding: string, via: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text()
  const m = new RegExp(`^capture_requests_total\\{encoding="${encoding}",via="${via}"\\} (\\d+)`, 'm').exec(text)
  return m ? Number(m[1]) : 0
}

interface Run {
  requests: { method: string; url: string; contentType: string | null; body: string | null }[]
  page: Page
  stop(): void
}

const FLAG_KEY = 'browser-flag'

async function runPage(version: string, user: string, options: Record<string, unknown>): Promise<Run> {
  const config = { token: PROJECT_KEY, host: service.url, user, flag: FLAG_KEY, options }
  const html = `<!doctype html><html><head><meta charset="utf-8"></head><body>
<div id="flag">pending</div>
<script src="/posthog.js"></script>
<script>
  const cfg = ${JSON.stringify(config)};
  posthog.init(cfg.token, Object.assign({
    api_host: cfg.host, persistence: 'memory', autocapture: false, capture_pageview: true,
    disable_session_recording: true, request_queue_config: { flush_interval_ms: 250 },
  }, cfg.options));
  posthog.capture('custom event', { from: 'page', n: 1 });
  posthog.identify(cfg.user, { email: cfg.user + '@example.com' });
  posthog.onFeatureFlags(function () {
    document.getElementById('flag').textContent = String(posthog.getFeatureFlag(cfg.flag));
  });
</script></body></html>`
  const site = await servePage(html, version)
  const page = await newPage(browser)
  const requests: Run['requests'] = []
  page.on('request', (r) => {
    if (!r.url().startsWith(service.url)) return
    requests.push({ method: r.method(), url: r.url(), contentType: r.headers()['content-type'] ?? null, body: r.postData() })
  })
  await page.goto(site.url)
  return { requests, page, stop: site.stop }
}

/**
 * The events of one browser session, under the anonymous id and the identified one: posthog-js may send its
 * first $pageview before or after identify() has run.
 */
async function sessionEvents(user: string): Promise<any[]> {
  const identify = await service.event(`distinct_id=${user}`, (e) => e.event === '$identify')
  expect(identify).toBeDefined()
  const anonId = identify.properties.$anon_distinct_id
  expect(typeof anonId).toBe('string')
  const deadline = Date.now() + 20_000
  let all: any[] = []
  while (Date.now() < deadline) {
    const [anon, known] = await Promise.all([
      service.api(`/api/projects/1/events/?distinct_id=${encodeURIComponent(anonId)}`),
      service.api(`/api/projects/1/events/?distinct_id=${encodeURIComponent(user)}`),
    ])
    all = [...anon.body.results, ...known.body.results]
    if (all.filter((e) => e.event !== '$feature_flag_called').length >= 3) break
    await Bun.sleep(100)
  }
  return all
}

function expectSession(user: string, events: any[]): void {
  // ($feature_flag_called comes too: the page reads a flag)
  expect(events.map((e) => e.event).filter((n) => n !== '$feature_flag_called').sort()).toEqual(['$identify', '$pageview', 'custom event'])
  const identify = events.find((e) => e.event === '$identify')
  expect(identify.properties.$set).toMatchObject({ email: `${user}@example.com` })
  const custom = events.find((e) => e.event === 'custom event')
  expect(custom.properties).toMatchObject({ from: 'page', n: 1, $lib: 'web' })
  expect(custom.properties.$current_url).toStartWith('http://127.0.0.1:')
  for (const e of events) expect(e.properties.$lib).toBe('web')
}

describe('posthog-js (newest) in Chromium', () => {
  test('loads its remote config, gzips its events (gzip-js) and they arrive as sent', async () => {
    const gzipBefore = await decoded('gzip', 'body')
    const run = await runPage('newest', 'js-gzip-user', {})
    try {
      expectSession('js-gzip-user', await sessionEvents('js-gzip-user'))
      await expectFlagShown(run, 'js-gzip-user')
      expect(run.requests.some((r) => r.url.includes(`/array/${PROJECT_KEY}/config`))).toBe(true)
      expect(run.requests.some((r) => r.url.includes('/flags/?v=2'))).toBe(true)
      // /i/v0/e/ once the remote config has named it (a batch flushed before it arrived goes to /e/)
      const sent = run.requests.filter((r) => r.method === 'POST' && /\/(i\/v0\/)?e\//.test(new URL(r.url).pathname))
      expect(sent.length).toBeGreaterThan(0)
      // current builds send gzip as text/plain with no hint at all: the magic bytes tell
      expect(await decoded('gzip', 'body')).toBeGreaterThan(gzipBefore)
    } finally {
      run.stop()
      await run.page.close()
    }
  })

  test('sends plain JSON with a CORS preflight when compression is disabled', async () => {
    const run = await runPage('newest', 'js-json-user', { disable_compression: true })
    try {
      expectSession('js-json-user', await sessionEvents('js-json-user'))
      await expectFlagShown(run, 'js-json-user')
      const sent = run.requests.filter((r) => r.method === 'POST' && /\/(i\/v0\/)?e\//.test(new URL(r.url).pathname))
      expect(sent.length).toBeGreaterThan(0)
      expect(sent.every((r) => r.contentType?.startsWith('application/json') && !r.url.includes('compression='))).toBe(true)
      expect(await decoded('json', 'body')).toBeGreaterThan(0)
      // each path the JSON went to was preflighted: /i/v0/e/, or /e/ when a batch left before the remote config
      // named /i/v0/e/ (which of the two is a race between the config's answer and the first flush)
      const metrics = await (await fetch(`${service.url}/metrics`)).text()
      for (const path of new Set(sent.map((r) => new URL(r.url).pathname.replace(/\/$/, '')))) {
        expect(metrics).toMatch(new RegExp(`http_requests_total\\{route="${path.replaceAll('/', '\\/')}",method="OPTIONS",status="200"\\} [1-9]`))
      }
    } finally {
      run.stop()
      await run.page.close()
    }
  })

  test('sends base64 form bodies over sendBeacon', async () => {
    const run = await runPage('newest', 'js-beacon-user', { api_transport: 'sendBeacon' })
    try {
      expectSession('js-beacon-user', await sessionEvents('js-beacon-user'))
      // Beacons are invisible to the page's request log; the service counts what it decoded.
      expect(await decoded('base64', 'form')).toBeGreaterThan(0)
    } finally {
      run.stop()
      await run.page.close()
    }
  })
})

describe('posthog-js and an event over 1 MiB', () => {
  test('its batch is answered 413 event_too_big once, not sent again, and none of it stored; later events flow', async () => {
    const metric = async () => Number(/^capture_requests_rejected_total\{code="event_too_big"\} (\d+)/m.exec(await (await fetch(`${service.url}/metrics`)).text())?.[1] ?? 0)
    const run = await runPage('newest', 'js-big-user', {})
    const answered: number[] = []
    run.page.on('response', (r) => {
      if (r.request().method() === 'POST' && /\/(i\/v0\/)?e\//.test(new URL(r.url()).pathname)) answered.push(r.status())
    })
    try {
      expectSession('js-big-user', await sessionEvents('js-big-user'))
      const before = await metric()
      // 20 strings of 60,000 random characters (under posthog-js's own cut of a string at 65,535): 1.2 MB that gzip cannot shrink
      await run.page.evaluate(() => {
        const chunk = () => Array.from(crypto.getRandomValues(new Uint8Array(45_000)), (b) => String.fromCharCode(65 + (b % 58))).join('').repeat(2).slice(0, 60_000)
        ;(globalThis as any).posthog.capture('too big', { parts: Array.from({ length: 20 }, chunk) })
      })
      const deadline = Date.now() + 15_000
      while (!answered.includes(413) && Date.now() < deadline) await Bun.sleep(100)
      expect(answered.filter((s) => s === 413)).toHaveLength(1)
      expect((await metric()) - before).toBe(1)
      await run.page.evaluate(() => (globalThis as any).posthog.capture('after big'))
      const after = await service.event('distinct_id=js-big-user', (e) => e.event === 'after big')
      expect(after).toBeDefined()
      // posthog-js does not send a request again once it was answered 4xx
      await Bun.sleep(1000)
      expect(answered.filter((s) => s === 413)).toHaveLength(1)
      expect(await service.event('distinct_id=js-big-user', (e) => e.event === 'too big', 300)).toBeUndefined()
    } finally {
      run.stop()
      await run.page.close()
    }
  })
})

describe('posthog-js 1.201.0 in Chromium', () => {
  test('calls /decide/ and sends to /e/; its events arrive as sent', async () => {
    const run = await runPage('1.201.0', 'js-old-user', {})
    try {
      expectSession('js-old-user', await sessionEvents('js-old-user'))
      await expectFlagShown(run, 'js-old-user')
      expect(run.requests.some((r) => r.url.includes('/decide/'))).toBe(true)
      expect(run.requests.some((r) => r.method === 'POST' && new URL(r.url).pathname === '/e/')).toBe(true)
    } finally {
      run.stop()
      await run.page.close()
    }
  })
})

describe('lz64 (sent by older posthog-js builds)', () => {
  test('an lz-string body, in the query hint and in a form, lands like any other', async () => {
    const events = (n: string) => [{ event: 'lz event', properties: { distinct_id: 'lz-user', token: PROJECT_KEY, $lib: 'web', via: n } }]
    const viaQuery = await fetch(`${service.url}/e/?compression=lz64&ver=1.20.0`, {
      method: 'POST',
      body: LZString.compressToBase64(JSON.stringify(events('query'))),
      headers: { 'content-type': 'text/plain' },
    })
    expect(viaQuery.status).toBe(200)
    const viaForm = await fetch(`${service.url}/e/`, {
      method: 'POST',
      body: `data=${encodeURIComponent(LZString.compressToBase64(JSON.stringify(events('form'))))}&compression=lz64`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(viaForm.status).toBe(200)
    const stored = await service.events('distinct_id=lz-user', 2)
    expect(stored.map((e) => e.properties.via).sort()).toEqual(['form', 'query'])
  })
})
