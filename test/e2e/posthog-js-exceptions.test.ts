// posthog-js in Chromium sends exceptions that phog groups into issues: `captureException` of the same error twice is
// (from the same place: the same stack) one issue with two occurrences (another error a second issue); and once the project turns exception autocapture
// on (autocapture_exceptions_opt_in), posthog-js loads /static/exception-autocapture.js from phog and an uncaught
// error becomes an issue by itself. On the embedded stores and on ClickHouse 18.16 + Postgres.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { launchBrowser, newPage, servePage } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'

for (const stores of ['embedded', 'real'] as const) {
  describe(`posthog-js exceptions become issues (${stores === 'real' ? 'ClickHouse + Postgres' : 'embedded stores'})`, () => {
    let service: E2EService
    let browser: Browser
    beforeAll(async () => {
      ;[service, browser] = await Promise.all([startService(stores), launchBrowser()])
    })
    afterAll(async () => {
      await browser?.close()
      await service?.stop()
    })

    /**
     * The issue whose description is `message`, once it has `occurrences` and its users (polled: the flush worker is
     * asynchronous, and on ClickHouse an event's person is known once the person mapping is copied there too).
     */
    async function issueOf(message: string, occurrences: number, ms = 40_000): Promise<any> {
      const deadline = Date.now() + ms
      let found: any = null
      const sum = (key: string) => found.reduce((n: number, i: any) => n + i.aggregations[key], 0)
      while (Date.now() < deadline) {
        const list = await service.api('/api/projects/1/error_tracking/issues/?status=all')
        found = (list.body.results ?? []).filter((i: any) => i.description === message)
        if (found.length > 0 && sum('occurrences') >= occurrences && sum('users') > 0) return found
        await Bun.sleep(250)
      }
      return found
    }

    const page = (body: string, config = '') => `<!doctype html><html><head><meta charset="utf-8"><title>errors</title></head><body>
<button>Break</button>
<script src="/posthog.js"></script>
<script>
  posthog.init(${JSON.stringify(PROJECT_KEY)}, { api_host: ${JSON.stringify(service.url)}, persistence: 'memory', autocapture: false,
    request_queue_config: { flush_interval_ms: 250 } ${config} });
  ${body}
</script></body></html>`

    test('captureException of the same error twice: one issue, two occurrences; another error: a second issue', async () => {
      const message = `checkout failed ${stores} ${crypto.randomUUID().slice(0, 8)}`
      const other = `${message} (other)`
      const html = page(`
  function pay(m) { try { throw new TypeError(m) } catch (e) { posthog.captureException(e) } }
  document.querySelector('button').addEventListener('click', () => { for (const m of ${JSON.stringify([message, message, other])}) pay(m) })`)
      const server = await servePage(html, '1.449-lazy')
      const tab = await newPage(browser)
      try {
        await tab.goto(server.url)
        await tab.waitForFunction(() => (globalThis as any).posthog?.__loaded === true)
        await tab.getByRole('button', { name: 'Break' }).click()
        const issues = await issueOf(message, 2)
        expect(issues).toHaveLength(1)
        expect(issues[0]).toMatchObject({ name: 'TypeError', status: 'active', aggregations: { occurrences: 2, users: 1 } })
        const second = await issueOf(other, 1)
        expect(second).toHaveLength(1)
        expect(second[0].id).not.toBe(issues[0].id)
        // the issue's events carry posthog-js's stack
        const one = await service.api(`/api/projects/1/error_tracking/issues/${issues[0].id}/`)
        expect(one.body.events).toHaveLength(2)
        const list = one.body.events[0].properties.$exception_list
        expect(list[0]).toMatchObject({ type: 'TypeError', value: message })
        expect(list[0].stacktrace.frames.length).toBeGreaterThan(0)
      } finally {
        await tab.context().close()
        server.stop()
      }
    }, 120_000)

    test('autocapture on: posthog-js loads exception-autocapture.js from phog and an uncaught error becomes an issue', async () => {
      const r = await service.api('/api/projects/1/', { method: 'PATCH', json: { autocapture_exceptions_opt_in: true } })
      expect(r.status).toBe(200)
      // the remote config says so (the flag cache reloads the project within a second)
      const deadline = Date.now() + 10_000
      while (Date.now() < deadline) {
        const config = (await (await fetch(`${service.url}/array/${PROJECT_KEY}/config`)).json()) as any
        if (config.errorTracking?.autocaptureExceptions === true) break
        await Bun.sleep(100)
      }
      const message = `uncaught ${stores} ${crypto.randomUUID().slice(0, 8)}`
      const html = page(`document.querySelector('button').addEventListener('click', () => { setTimeout(() => { throw new Error(${JSON.stringify(message)}) }, 0) })`)
      const server = await servePage(html, '1.449-lazy')
      const tab = await newPage(browser)
      const scripts: string[] = []
      tab.on('request', (req) => {
        if (req.url().startsWith(service.url) && req.url().includes('/static/')) scripts.push(new URL(req.url()).pathname)
      })
      try {
        await tab.goto(server.url)
        const loaded = Date.now() + 20_000
        while (!scripts.some((p) => p.endsWith('/exception-autocapture.js')) && Date.now() < loaded) await tab.waitForTimeout(100)
        expect(scripts.some((p) => p.endsWith('/exception-autocapture.js'))).toBe(true)
        await tab.waitForTimeout(300)
        await tab.getByRole('button', { name: 'Break' }).click()
        const issues = await issueOf(message, 1)
        expect(issues).toHaveLength(1)
        expect(issues[0]).toMatchObject({ name: 'Error', aggregations: { occurrences: 1 } })
        const one = await service.api(`/api/projects/1/error_tracking/issues/${issues[0].id}/`)
        expect(one.body.events[0].properties.$exception_handled).toBe(false)
      } finally {
        await tab.context().close()
        server.stop()
      }
    }, 120_000)
  })
}
