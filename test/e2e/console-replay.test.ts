// The console's Session replay in Chromium: posthog-js records a page (its text, a click, typing, a console line);
// a second Chromium page signs in to the console, finds the recording under "Session replay", opens it, presses
// "Play", and the replayed page (rrweb's sandboxed iframe) shows the recorded text; the console log and the
// session's events are listed; a person's page and an event in Live events link to the recording; Delete. On the embedded
// stores and on ClickHouse 18.16 + Postgres.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { fileURLToPath } from 'node:url'
import { launchBrowser, newPage, servePage, type PageServer } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'
import { signedInPage, tableRows } from './console-session'

const EMAIL = 'replay@example.com'
const PASSWORD = 'console replay password'
const SCREENSHOT = fileURLToPath(new URL('../../docs/console-replay.png', import.meta.url))
const MARKER = 'Replayed checkout page'

async function eventuallyTrue(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('not true in time')
    await Bun.sleep(100)
  }
}

let service: E2EService
let browser: Browser
let site: PageServer
let recording: { id: string; distinct_id: string }

const SITE_HTML = (apiHost: string) => `<!doctype html><html><head><meta charset="utf-8"><title>shop</title><style>h1 { color: rgb(200, 0, 0) }</style></head><body>
<h1>${MARKER}</h1><p>Three items in the basket.</p><input aria-label="Email"><button onclick="console.log('paid by', document.querySelector('input').value)">Pay</button>
<script src="/posthog.js"></script>
<script>
  posthog.init(${JSON.stringify(PROJECT_KEY)}, { api_host: ${JSON.stringify(apiHost)}, persistence: 'memory', autocapture: false,
    request_queue_config: { flush_interval_ms: 250 } });
</script></body></html>`

for (const stores of ['embedded', 'real'] as const) {
  describe(`Session replay in the console (${stores === 'real' ? 'ClickHouse + Postgres' : 'embedded stores'})`, () => {
    let page: Page

    beforeAll(async () => {
      recording = undefined as never
      ;[service, browser] = await Promise.all([startService(stores, { INIT_ADMIN_EMAIL: EMAIL, INIT_ADMIN_PASSWORD: PASSWORD }), launchBrowser()])
      const r = await service.api('/api/projects/1/', { method: 'PATCH', json: { session_recording_opt_in: true, capture_console_log_opt_in: true } })
      expect(r.status).toBe(200)
      site = await servePage(SITE_HTML(service.url), '1.449-lazy')
      // the visitor: clicks and typing until the recording is listed with both
      const visitor = await newPage(browser)
      try {
        await visitor.goto(`http://127.0.0.1:${site.port}/`)
        const deadline = Date.now() + 40_000
        for (let round = 0; Date.now() < deadline; round++) {
          await visitor.getByRole('textbox', { name: 'Email' }).fill(`visitor${round}@example.com`)
          await visitor.getByRole('button', { name: 'Pay' }).click()
          await visitor.evaluate(() => (globalThis as any).posthog.capture('paid'))
          await visitor.waitForTimeout(400)
          const list = await service.api('/api/projects/1/session_recordings/')
          const found = list.body.results?.[0]
          if (found && found.click_count > 0 && found.keypress_count > 0 && found.console_log_count > 0) {
            recording = found
            break
          }
        }
        expect(recording).toBeDefined()
      } finally {
        await visitor.context().close()
      }
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
      site?.stop()
      await service?.stop()
    })

    test('"Session replay" lists the recording: person, start, duration, start URL, clicks', async () => {
      page = await signedInPage(browser, service, EMAIL, PASSWORD)
      await page.getByRole('navigation').getByRole('link', { name: 'Session replay', exact: true }).click()
      const table = page.getByRole('table', { name: 'Recordings' })
      await table.waitFor()
      const rows = await tableRows(table)
      expect(rows.length).toBe(1)
      expect(rows[0]![0]).toBe(recording.distinct_id)
      expect(rows[0]![2]).toMatch(/^\d+:\d\d$/)
      expect(rows[0]![3]).toContain(`127.0.0.1:${site.port}`)
      expect(Number(rows[0]![4])).toBeGreaterThan(0)
      // a filter that matches nothing says so
      await page.getByLabel('Minimum duration (seconds)').fill('86400')
      await page.getByRole('button', { name: 'Find' }).click()
      await page.getByText('No recording matches.').waitFor()
      await page.getByLabel('Minimum duration (seconds)').fill('')
      await page.getByRole('button', { name: 'Find' }).click()
      await table.waitFor()
    }, 60_000)

    test('the recording plays in the player: the replayed iframe shows the recorded page', async () => {
      await page.getByRole('table', { name: 'Recordings' }).getByRole('link', { name: recording.distinct_id }).click()
      expect(new URL(page.url()).pathname).toBe(`/console/replay/${recording.id}`)
      const player = page.getByRole('region', { name: 'Player' })
      const play = player.getByRole('button', { name: 'Play' })
      await play.waitFor()
      await page.waitForFunction(() => !(globalThis as any).document.querySelector('.player button')?.hasAttribute('disabled'), null, { timeout: 20_000 })
      await player.getByRole('combobox', { name: 'Speed' }).selectOption('4')
      expect(await player.getByRole('checkbox', { name: 'Skip inactivity' }).isChecked()).toBe(true)
      await play.click()
      await player.getByRole('button', { name: 'Pause' }).waitFor()
      const frame = page.frameLocator('.replay-frame iframe')
      await frame.getByText(MARKER).waitFor({ timeout: 20_000 })
      expect(await frame.locator('p').first().textContent()).toBe('Three items in the basket.')
      // styled as recorded (the console's CSP blocks the rebuilt <style>; the player applies it through CSSOM), and
      // what were scripts hidden
      await eventuallyTrue(() => frame.locator('h1').evaluate((h) => (globalThis as any).getComputedStyle(h).color === 'rgb(200, 0, 0)'))
      expect(await frame.getByText('SCRIPT_PLACEHOLDER').first().isVisible()).toBe(false)
      // sandboxed: the recorded page's scripts never run
      const sandbox = await page.locator('.replay-frame iframe').getAttribute('sandbox')
      expect(sandbox).not.toContain('allow-scripts')
      const timeline = player.getByRole('slider', { name: 'Timeline' })
      expect(Number(await timeline.getAttribute('max'))).toBeGreaterThan(0)
      await page.waitForFunction(() => Number(((globalThis as any).document.querySelector('input[aria-label="Timeline"]') as unknown as { value: string }).value) > 0, null, { timeout: 20_000 })
      // the console log the recording carries, and the session's events
      const log = await tableRows(page.getByRole('table', { name: 'Console log' }))
      expect(log.some((row) => /^paid by visitor\d+@example\.com$/.test(row[2] ?? ''))).toBe(true)
      const events = page.getByRole('table', { name: 'Events of this session' })
      await events.waitFor()
      expect((await tableRows(events)).some((row) => row[1] === 'paid')).toBe(true)
      // at its end the player stops at the timeline's end; Play starts again from the beginning, Pause stops there
      await player.getByRole('button', { name: 'Play' }).waitFor({ timeout: 60_000 })
      expect(await timeline.inputValue()).toBe((await timeline.getAttribute('max')) ?? '')
      await player.getByRole('button', { name: 'Play' }).click()
      await player.getByRole('button', { name: 'Pause' }).click()
      await player.getByRole('button', { name: 'Play' }).waitFor()
      expect(Number(await timeline.inputValue())).toBeLessThan(Number(await timeline.getAttribute('max')))
      await frame.getByText(MARKER).waitFor()
      if (stores === 'embedded') await page.screenshot({ path: SCREENSHOT })
    }, 60_000)

    test("a person's page and an event with $session_id link to the recording; Delete asks, then it is gone", async () => {
      // posthog-js made no person (person_profiles: identified_only): one is made for its distinct id
      const r = await fetch(`${service.url}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: PROJECT_KEY, batch: [{ event: 'signed up', distinct_id: recording.distinct_id, properties: { $set: { plan: 'pro' } } }] }),
      })
      expect(r.status).toBe(200)
      await page.goto(`${service.url}/console/persons/${encodeURIComponent(recording.distinct_id)}`)
      await page.getByRole('heading', { name: 'Distinct IDs' }).waitFor()
      await page.getByRole('link', { name: 'Recordings', exact: true }).click()
      await page.getByText("Only one person's recordings.").waitFor()
      await page.getByRole('table', { name: 'Recordings' }).getByRole('link').first().waitFor()
      expect(await tableRows(page.getByRole('table', { name: 'Recordings' }))).toHaveLength(1)
      await page.getByRole('navigation').getByRole('link', { name: 'Live events', exact: true }).click()
      await page.getByRole('table', { name: 'Newest events' }).getByRole('button', { name: 'paid' }).first().click()
      await page.getByRole('link', { name: 'Watch the recording of this session' }).click()
      await page.getByRole('region', { name: 'Player' }).waitFor()
      expect(new URL(page.url()).pathname).toBe(`/console/replay/${recording.id}`)
      // Delete asks first, then the list has it no more
      await page.getByRole('button', { name: 'Delete recording' }).click()
      await page.getByRole('dialog', { name: 'Delete this recording?' }).getByRole('button', { name: 'Delete' }).click()
      await page.getByText('No recordings yet', { exact: false }).waitFor()
      expect(new URL(page.url()).pathname).toBe('/console/replay')
      expect((await service.api(`/api/projects/1/session_recordings/${recording.id}/`)).status).toBe(404)
    }, 60_000)
  })
}
