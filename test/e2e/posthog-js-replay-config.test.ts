// Turning replay on for posthog-js 1.449 and 1.201 in Chromium, with the page loading posthog-js without its
// recorder (array.js, as the snippet does): with the project's recording off, posthog-js loads no recorder script
// and sends nothing to /s/; once PATCHed on, it loads its recorder from this service's /static/ (never a CDN) and
// starts POSTing recordings to /s/. Requests are counted as the page makes them (whatever /s/ answers).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Request as PageRequest } from 'playwright-core'
import { launchBrowser, newPage, servePage } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'

let service: E2EService
let browser: Browser
beforeAll(async () => {
  ;[service, browser] = await Promise.all([startService(), launchBrowser()])
})
afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

interface Visit {
  /** every request the page made to the service: method and path with query */
  requests: { method: string; path: string; status: number | null }[]
}

/** A page on its own origin loading posthog-js (recording left to the project's settings), clicked and typed in. */
async function visit(version: string, waitFor: (requests: Visit['requests']) => boolean, ms: number): Promise<Visit> {
  const html = `<!doctype html><html><head><meta charset="utf-8"></head><body>
<h1>Checkout</h1><input aria-label="Email"><button>Pay</button>
<script src="/posthog.js"></script>
<script>
  posthog.init(${JSON.stringify(PROJECT_KEY)}, { api_host: ${JSON.stringify(service.url)}, persistence: 'memory', autocapture: false,
    request_queue_config: { flush_interval_ms: 250 } });
</script></body></html>`
  const server = await servePage(html, `${version}-lazy`)
  const page = await newPage(browser)
  const requests: Visit['requests'] = []
  const seen = new Map<PageRequest, Visit['requests'][number]>()
  page.on('request', (r) => {
    if (!r.url().startsWith(service.url)) return
    const entry = { method: r.method(), path: r.url().slice(service.url.length), status: null as number | null }
    seen.set(r, entry)
    requests.push(entry)
  })
  page.on('response', (r) => {
    const entry = seen.get(r.request())
    if (entry) entry.status = r.status()
  })
  try {
    await page.goto(`http://127.0.0.1:${server.port}/`)
    const deadline = Date.now() + ms
    let round = 0
    while (Date.now() < deadline && !waitFor(requests)) {
      // something to record: typing and clicks
      await page.getByRole('textbox', { name: 'Email' }).fill(`visitor${round++}@example.com`)
      await page.getByRole('button', { name: 'Pay' }).click()
      await page.waitForTimeout(250)
    }
    return { requests }
  } finally {
    await page.context().close()
    server.stop()
  }
}

const recorderScripts = (v: Visit) => v.requests.filter((r) => /^\/static\/([\d.]+\/)?(lazy-recorder|recorder|posthog-recorder)\.js/.test(r.path))
const recordings = (v: Visit) => v.requests.filter((r) => r.method === 'POST' && /^\/s\/?(\?|$)/.test(r.path))

async function setRecording(on: boolean): Promise<void> {
  const r = await service.api('/api/projects/1/', { method: 'PATCH', json: { session_recording_opt_in: on } })
  expect(r.status).toBe(200)
  expect(r.body.session_recording_opt_in).toBe(on)
}

for (const version of ['1.449', '1.201']) {
  describe(`posthog-js ${version}`, () => {
    test('recording off: no recorder script is loaded and nothing is sent to /s/', async () => {
      await setRecording(false)
      // long enough for the config, a few clicks and several queue flushes
      const v = await visit(version, () => false, 4000)
      // the page did talk to the service (config or flags, and its $pageview)
      expect(v.requests.some((r) => r.path.startsWith('/array/') || r.path.startsWith('/decide') || r.path.startsWith('/flags'))).toBe(true)
      expect(recorderScripts(v)).toEqual([])
      expect(recordings(v)).toEqual([])
    }, 60_000)

    test('recording on: the recorder comes from this service’s /static/ and recordings are POSTed to /s/', async () => {
      await setRecording(true)
      const v = await visit(version, (requests) => requests.some((r) => r.method === 'POST' && /^\/s\/?(\?|$)/.test(r.path)), 30_000)
      const scripts = recorderScripts(v)
      expect(scripts.length).toBeGreaterThan(0)
      // served by phog (posthog-js 1.449 first asks the versioned path, 1.201 /static/recorder.js?v=1.201.0)
      expect(scripts.some((s) => s.status === 200)).toBe(true)
      if (version === '1.201') expect(scripts.map((s) => s.path.split('?')[0])).toContain('/static/recorder.js')
      else expect(scripts.map((s) => s.path.split('?')[0]).some((p) => p.endsWith('/lazy-recorder.js'))).toBe(true)
      expect(recordings(v).length).toBeGreaterThan(0)
    }, 60_000)
  })
}
