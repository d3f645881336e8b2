// The console's Error tracking in Chromium, driven by roles and names: `$exception` events as posthog-js sends them
// (its `$exception_list`) become issues; the table "Issues" lists them with their occurrences, users, last seen and
// a named sparkline; an issue's page shows the stack of its latest event (thrown first, in-app frames marked) and its
// events, every message and frame as text; "Resolve", "Suppress" and "Reopen" change its status, and the status
// filter follows; two issues selected are merged into the first one selected, and a fingerprint of the merged issue
// is split off again. On the embedded stores and on ClickHouse 18.16 + Postgres.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { fileURLToPath } from 'node:url'
import { launchBrowser } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'
import { eventually, signedInPage, tableRows } from './console-session'

const EMAIL = 'errors@example.com'
const PASSWORD = 'console errors password'
const SCREENSHOT = fileURLToPath(new URL('../../docs/console-errors.png', import.meta.url))
/** The issues table's rows without its first cell (the "Select" checkbox). */
const issueRows = async (table: Parameters<typeof tableRows>[0]) => (await tableRows(table)).map((row) => row.slice(1))
const HOSTILE = `Cannot read properties of undefined (reading '<img src=x onerror="window.pwned=1">')`

/** An exception as posthog-js's captureException lists it: frames outermost first, as Sentry orders them. */
function exception(type: string, value: string, inner: string) {
  return {
    type,
    value,
    mechanism: { type: 'generic', handled: false, synthetic: false },
    stacktrace: {
      type: 'raw',
      frames: [
        { platform: 'web:javascript', filename: 'https://cdn.example.com/vendor.js', function: 'dispatch', lineno: 3, colno: 77, in_app: false },
        { platform: 'web:javascript', filename: 'https://shop.example.com/assets/app.js', function: inner, lineno: 1, colno: 5123, in_app: true },
      ],
    },
  }
}

for (const stores of ['embedded', 'real'] as const) {
  describe(`Error tracking in the console (${stores === 'real' ? 'ClickHouse + Postgres' : 'embedded stores'})`, () => {
    let service: E2EService
    let browser: Browser
    let page: Page
    let issues: { id: string; name: string }[]

    beforeAll(async () => {
      ;[service, browser] = await Promise.all([startService(stores, { INIT_ADMIN_EMAIL: EMAIL, INIT_ADMIN_PASSWORD: PASSWORD }), launchBrowser()])
      const event = (distinctId: string, list: unknown[], url: string, minutesAgo: number) => ({
        event: '$exception',
        distinct_id: distinctId,
        timestamp: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
        properties: { $exception_list: list, $exception_level: 'error', $current_url: url, $session_id: `s-${distinctId}` },
      })
      const batch = [
        event('ann', [exception('TypeError', HOSTILE, 'onCheckout')], 'https://shop.example.com/checkout', 3),
        event('bob', [exception('TypeError', HOSTILE, 'onCheckout')], 'https://shop.example.com/cart', 2),
        event('ann', [exception('RangeError', 'Invalid array length', 'grow')], 'https://shop.example.com/', 4),
      ]
      const r = await fetch(`${service.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, batch }) })
      expect(r.status).toBe(200)
      const listed = await eventually(
        () => service.api('/api/projects/1/error_tracking/issues/'),
        (l) => l.body?.results?.length === 2 && l.body.results.every((i: { aggregations: { occurrences: number } }) => i.aggregations.occurrences > 0),
      )
      expect(listed.status).toBe(200)
      issues = listed.body.results
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
      await service?.stop()
    })

    test('"Error tracking" lists the issues: name and message, occurrences, users, last seen, a named sparkline', async () => {
      page = await signedInPage(browser, service, EMAIL, PASSWORD)
      await page.getByRole('navigation').getByRole('link', { name: 'Error tracking', exact: true }).click()
      const table = page.getByRole('table', { name: 'Issues' })
      await table.waitFor()
      const headers = await table.locator('thead th').allTextContents()
      expect(headers.slice(0, 5)).toEqual(['Select', 'Issue', 'Occurrences', 'Users', 'Last seen'])
      const rows = await issueRows(table)
      expect(rows).toHaveLength(2)
      const typeError = rows.find((r) => r[0]!.startsWith('TypeError'))!
      expect(typeError[0]).toBe(`TypeError${HOSTILE}`)
      expect(typeError.slice(1, 3)).toEqual(['2', '2'])
      expect(typeError[3]).not.toBe('—')
      expect(rows.find((r) => r[0]!.startsWith('RangeError'))!.slice(1, 3)).toEqual(['1', '1'])
      await table.getByRole('img', { name: /^Occurrences of TypeError per day: 2 over \d+ days$/ }).waitFor()
      expect(await table.locator('td img').count()).toBe(0)
    }, 60_000)

    test("an issue's page: the stack of its latest event, thrown first, in-app marked; its events; all as text", async () => {
      await page.getByRole('table', { name: 'Issues' }).getByRole('link', { name: 'TypeError' }).click()
      await page.getByRole('heading', { name: 'TypeError', level: 1 }).waitFor()
      const stack = page.getByRole('table', { name: 'Stack trace 1' })
      await stack.waitFor()
      expect(await tableRows(stack)).toEqual([
        ['onCheckout', 'https://shop.example.com/assets/app.js', '1', '5123', 'In app'],
        ['dispatch', 'https://cdn.example.com/vendor.js', '3', '77', ''],
      ])
      await page.getByRole('heading', { name: `TypeError: ${HOSTILE}` }).waitFor()
      const events = await tableRows(page.getByRole('table', { name: 'Events of this issue' }))
      expect(events.map((e) => e.slice(1))).toEqual([
        ['bob', 'https://shop.example.com/cart'],
        ['ann', 'https://shop.example.com/checkout'],
      ])
      expect(await page.locator('main img').count()).toBe(0)
      if (stores === 'embedded') await page.screenshot({ path: SCREENSHOT, fullPage: true })
      expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined()
    }, 60_000)

    test('"Resolve", "Suppress" and "Reopen" change the status; the status filter follows', async () => {
      const typeError = issues.find((i) => i.name === 'TypeError')!
      const status = async () => (await service.api(`/api/projects/1/error_tracking/issues/${typeError.id}/?events_limit=0`)).body.status
      await page.getByRole('button', { name: 'Resolve' }).click()
      await page.getByRole('status').filter({ hasText: 'Resolved' }).waitFor()
      expect(await status()).toBe('resolved')
      expect(await page.getByRole('button', { name: 'Resolve' }).count()).toBe(0)
      await page.getByRole('button', { name: 'Suppress' }).click()
      await page.getByRole('status').filter({ hasText: 'Suppressed' }).waitFor()
      expect(await status()).toBe('suppressed')
      await page.getByRole('link', { name: 'All issues' }).click()
      const table = page.getByRole('table', { name: 'Issues' })
      await eventually(() => issueRows(table), (rows) => rows.length === 1)
      expect((await issueRows(table))[0]![0]).toStartWith('RangeError')
      await page.getByLabel('Status').selectOption('suppressed')
      await eventually(() => issueRows(table), (rows) => rows.length === 1 && rows[0]![0]!.startsWith('TypeError'))
      await table.getByRole('link', { name: 'TypeError' }).click()
      await page.getByRole('button', { name: 'Reopen' }).click()
      await page.getByRole('status').filter({ hasText: 'Active' }).waitFor()
      expect(await status()).toBe('active')
      await page.getByRole('button', { name: 'Resolve' }).waitFor()
    }, 60_000)

    test('two issues selected are merged into the first one selected (asked first); a fingerprint is split off again', async () => {
      const [typeError, rangeError] = ['TypeError', 'RangeError'].map((name) => issues.find((i) => i.name === name)!)
      const fingerprintsOf = async (id: string) => (await service.api(`/api/projects/1/error_tracking/issues/${id}/?events_limit=0`)).body.fingerprints as string[]
      const [rangeFingerprint] = await fingerprintsOf(rangeError!.id)
      await page.getByRole('link', { name: 'All issues' }).click()
      const table = page.getByRole('table', { name: 'Issues' })
      await eventually(() => issueRows(table), (rows) => rows.length === 2)
      expect(await page.getByRole('button', { name: 'Merge selected issues' }).count()).toBe(0)
      await table.getByRole('checkbox', { name: 'Select TypeError' }).check()
      await table.getByRole('checkbox', { name: 'Select RangeError' }).check()
      await page.getByRole('button', { name: 'Merge selected issues' }).click()
      await page.getByRole('dialog', { name: 'Merge 2 issues into “TypeError”?' }).getByRole('button', { name: 'Merge' }).click()
      const merged = await eventually(() => issueRows(table), (rows) => rows.length === 1 && rows[0]![1] === '3')
      expect(merged[0]![0]).toStartWith('TypeError')
      expect(merged[0]!.slice(1, 3)).toEqual(['3', '2'])
      expect((await service.api('/api/projects/1/error_tracking/issues/')).body.results.map((i: { id: string }) => i.id)).toEqual([typeError!.id])
      const both = await fingerprintsOf(typeError!.id)
      expect(both).toHaveLength(2)
      expect(both).toContain(rangeFingerprint!)

      await table.getByRole('link', { name: 'TypeError' }).click()
      const fingerprints = page.getByRole('table', { name: 'Fingerprints' })
      expect(await eventually(() => tableRows(fingerprints), (rows) => rows.length === 2)).toHaveLength(2)
      await page.getByRole('button', { name: `Split fingerprint ${rangeFingerprint!.slice(0, 16)}…` }).click()
      await page.getByRole('dialog', { name: 'Split this fingerprint into an issue of its own?' }).getByRole('button', { name: 'Split' }).click()
      await page.getByRole('status').filter({ hasText: 'Split off into a new issue' }).waitFor()
      await eventually(() => fingerprints.count(), (n) => n === 0) // one fingerprint left: the section is gone
      expect(await fingerprintsOf(typeError!.id)).not.toContain(rangeFingerprint!)
      const listed = await eventually(() => service.api('/api/projects/1/error_tracking/issues/'), (r) => r.body?.results?.length === 2)
      const parted = listed.body.results.find((i: { id: string }) => i.id !== typeError!.id)
      expect(await fingerprintsOf(parted.id)).toEqual([rangeFingerprint!])
      // the new issue takes the name it was split from; its stack is the RangeError's
      await page.getByRole('link', { name: 'a new issue' }).click()
      await page.getByRole('heading', { name: 'RangeError: Invalid array length' }).waitFor()
      expect(new URL(page.url()).pathname).toBe(`/console/error-tracking/${parted.id}`)
    }, 60_000)
  })
}
