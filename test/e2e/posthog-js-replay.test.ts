// posthog-js (1.449 and 1.201) in Chromium records a page while a visitor clicks and types; the recording is then
// listed with its clicks, keypresses and URL, and its snapshots, read back through the two-step API, hold the page's
// text (in the full snapshot posthog-js compressed, `cv`, decompressed here as the player does). On the embedded
// stores and on ClickHouse 18.16 + Postgres.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gunzipSync } from 'node:zlib'
import type { Browser } from 'playwright-core'
import { launchBrowser, newPage, servePage } from './browser'
import { PERSONAL_KEY, PROJECT_KEY, startService, type E2EService } from './service'

/** The player's step before rrweb: a `cv` event's compressed strings (gzip as latin1) back to JSON. */
function decompressed(event: Record<string, any>): Record<string, any> {
  if (event.cv !== '2024-10') return event
  const unzip = (s: unknown) => (typeof s === 'string' ? JSON.parse(gunzipSync(Buffer.from(s, 'latin1')).toString('utf8')) : s)
  if (event.type === 2) return { ...event, data: unzip(event.data) }
  if (event.type === 3 && event.data?.source === 0) return { ...event, data: { ...event.data, texts: unzip(event.data.texts), attributes: unzip(event.data.attributes), removes: unzip(event.data.removes), adds: unzip(event.data.adds) } }
  return event
}

for (const stores of ['embedded', 'real'] as const) {
  describe(`posthog-js recordings stored and read back (${stores === 'real' ? 'ClickHouse + Postgres' : 'embedded stores'})`, () => {
    let service: E2EService
    let browser: Browser
    beforeAll(async () => {
      ;[service, browser] = await Promise.all([startService(stores), launchBrowser()])
      const r = await service.api('/api/projects/1/', { method: 'PATCH', json: { session_recording_opt_in: true } })
      expect(r.status).toBe(200)
    })
    afterAll(async () => {
      await browser?.close()
      await service?.stop()
    })

    for (const version of ['1.449', '1.201']) {
      test(`posthog-js ${version}: clicks and typing become a recording whose snapshots show the page`, async () => {
        const marker = `Checkout ${version} ${stores}`
        const html = `<!doctype html><html><head><meta charset="utf-8"><title>shop</title></head><body>
<h1>${marker}</h1><input aria-label="Email"><button>Pay</button>
<script src="/posthog.js"></script>
<script>
  posthog.init(${JSON.stringify(PROJECT_KEY)}, { api_host: ${JSON.stringify(service.url)}, persistence: 'memory', autocapture: false,
    request_queue_config: { flush_interval_ms: 250 } });
</script></body></html>`
        const server = await servePage(html, `${version}-lazy`)
        const page = await newPage(browser)
        let sessionId: string | null = null
        page.on('request', (r) => {
          if (r.method() !== 'POST' || !/\/s\/?(\?|$)/.test(r.url().slice(service.url.length))) return
          sessionId ??= 'pending'
        })
        try {
          await page.goto(`http://127.0.0.1:${server.port}/`)
          let found: any = null
          const deadline = Date.now() + 40_000
          for (let round = 0; Date.now() < deadline && !found; round++) {
            await page.getByRole('textbox', { name: 'Email' }).fill(`visitor${round}@example.com`)
            await page.getByRole('button', { name: 'Pay' }).click()
            await page.waitForTimeout(300)
            const list = await service.api(`/api/projects/1/session_recordings/?url=${encodeURIComponent(`127.0.0.1:${server.port}`)}`)
            const candidate = list.body.results?.[0]
            if (candidate && candidate.click_count > 0 && candidate.keypress_count > 0) found = candidate
          }
          expect(sessionId).not.toBeNull()
          expect(found).not.toBeNull()
          expect(found.start_url).toContain(`127.0.0.1:${server.port}`)
          expect(found.snapshot_source).toBe('web')
          const sources = await service.api(`/api/projects/1/session_recordings/${found.id}/snapshots`)
          expect(sources.status).toBe(200)
          const last = sources.body.sources.length - 1
          const r = await fetch(`${service.url}/api/projects/1/session_recordings/${found.id}/snapshots?source=blob_v2&start_blob_key=0&end_blob_key=${last}`, {
            headers: { authorization: `Bearer ${PERSONAL_KEY}` },
          })
          expect(r.headers.get('content-type')).toContain('application/jsonl')
          const events = (await r.text()).trim().split('\n').map((line) => JSON.parse(line) as [string, Record<string, any>])
          expect(events.every(([windowId]) => typeof windowId === 'string' && windowId.length > 0)).toBe(true)
          const full = events.map(([, e]) => decompressed(e)).find((e) => e.type === 2)
          expect(full).toBeDefined()
          expect(JSON.stringify(full!.data)).toContain(marker)
        } finally {
          await page.context().close()
          server.stop()
        }
      }, 90_000)
    }
  })
}
