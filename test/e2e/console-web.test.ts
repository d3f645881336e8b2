// The console's round-three pages in Debian's Chromium, driven by roles and names: Web analytics (the five figures
// and the top tables against the query API's answers), the Insights tabs Lifecycle and Stickiness, a breakdown by a
// person property, retention by week, rounded sums, deleting saved insights and experiments, Launch asking first,
// a draft experiment without a metric, and the project's timezone set in Settings and shown where times are.
// Screenshots of the new pages go to docs/.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { fileURLToPath } from 'node:url'
import { launchBrowser, newPage } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'

const EMAIL = 'pm@example.com'
const PASSWORD = 'console web password'
const DAY = 86_400_000
const screenshot = (name: string) => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url))

let service: E2EService
let browser: Browser
let page: Page

async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  let value = await read()
  while (!check(value) && Date.now() < deadline) {
    await Bun.sleep(200)
    value = await read()
  }
  return value
}

async function runQuery(node: Record<string, unknown>): Promise<any> {
  const r = await service.api('/api/projects/1/query/', { method: 'POST', json: { query: node, refresh: 'force_blocking' } })
  expect(r.status).toBe(200)
  return r.body
}

async function tableRows(table: Locator): Promise<string[][]> {
  return table.locator('tbody tr').evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => (cell.textContent ?? '').trim())))
}

const go = (label: string) => page.getByRole('navigation').getByRole('link', { name: label, exact: true }).click()

// Visits: each visitor one session of pageviews (path, referrer, device) today, some also a week ago (the previous
// period); each visitor a person with a plan; purchases with revenues whose float sum is noisy.
const VISITS = [
  { id: 'v0', plan: 'pro', paths: ['/', '/pricing', '/signup'], ref: 'google.com', device: 'Desktop' },
  { id: 'v1', plan: 'free', paths: ['/'], ref: 'google.com', device: 'Mobile' },
  { id: 'v2', plan: 'pro', paths: ['/pricing', '/'], ref: 'news.ycombinator.com', device: 'Desktop' },
  { id: 'v3', plan: 'free', paths: ['/blog'], ref: '$direct', device: 'Mobile' },
  { id: 'v4', plan: 'pro', paths: ['/', '/pricing'], ref: 'google.com', device: 'Tablet' },
]
const REVENUES = [100.1, 200.2, 83.64]

beforeAll(async () => {
  ;[service, browser] = await Promise.all([startService('embedded', { INIT_ADMIN_EMAIL: EMAIL, INIT_ADMIN_PASSWORD: PASSWORD }), launchBrowser()])
  const now = Date.now()
  const events: Record<string, unknown>[] = []
  for (const [n, v] of VISITS.entries()) {
    for (const [back, paths] of [[0, v.paths], [10, n < 2 ? v.paths.slice(0, 1) : []]] as const) {
      const start = now - back * DAY - 3_600_000 + n * 60_000
      paths.forEach((path, i) =>
        events.push({
          event: '$pageview',
          distinct_id: v.id,
          timestamp: new Date(start + i * 20_000).toISOString(),
          properties: { $session_id: `s-${v.id}-${back}`, $pathname: path, $current_url: `https://shop.test${path}`, $referring_domain: v.ref, $device_type: v.device, $browser: 'Chrome', $set: { plan: v.plan } },
        }),
      )
    }
  }
  REVENUES.forEach((revenue, i) => events.push({ event: 'purchased', distinct_id: VISITS[i].id, timestamp: new Date(now - 1_800_000).toISOString(), properties: { revenue } }))
  const r = await fetch(`${service.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, batch: events }) })
  expect(r.status).toBe(200)
  await eventually(() => service.api('/api/projects/1/events/?limit=1000'), (r) => r.body?.results?.length === events.length)
  page = await newPage(browser)
  page.setDefaultTimeout(15_000)
  await page.setViewportSize({ width: 1200, height: 900 })
  await page.goto(`${service.url}/console/`)
  await page.getByLabel('Email').fill(EMAIL)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('navigation').waitFor()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

describe('console: web analytics', () => {
  test("the five figures with their change, and the top pages, referrers and devices, as the query API answers", async () => {
    await go('Web analytics')
    await page.getByLabel('Date range').selectOption('-7d')
    expect(await page.getByRole('checkbox', { name: 'Compare to previous period' }).isChecked()).toBe(true)
    const overview = await runQuery({ kind: 'WebOverviewQuery', dateRange: { date_from: '-7d' }, compareFilter: { compare: true }, properties: [] })
    const byKey = Object.fromEntries(overview.results.map((r: any) => [r.key, r]))
    expect(byKey.visitors.value).toBe(VISITS.length)
    expect(byKey.views.value).toBe(VISITS.reduce((n, v) => n + v.paths.length, 0))
    for (const name of ['Visitors', 'Views', 'Sessions', 'Session duration', 'Bounce rate']) await page.getByRole('figure', { name }).waitFor()
    const visitors = page.getByRole('figure', { name: 'Visitors' })
    await expect(visitors.textContent()).resolves.toContain(String(VISITS.length))
    expect(await visitors.textContent()).toContain(`${byKey.visitors.changeFromPreviousPct > 0 ? '+' : ''}${byKey.visitors.changeFromPreviousPct}% from the previous period`)
    expect(await page.getByRole('figure', { name: 'Views' }).textContent()).toContain(String(byKey.views.value))
    expect(await page.getByRole('figure', { name: 'Sessions' }).textContent()).toContain(String(byKey.sessions.value))
    expect(await page.getByRole('figure', { name: 'Bounce rate' }).textContent()).toContain(`${Number(byKey['bounce rate'].value.toFixed(1))}%`)

    const pages = await runQuery({ kind: 'WebStatsTableQuery', breakdownBy: 'Page', includeBounceRate: true, dateRange: { date_from: '-7d' }, limit: 10, properties: [] })
    const table = page.getByRole('table', { name: 'Pages', exact: true })
    await table.waitFor()
    expect((await tableRows(table)).map((row) => row.slice(0, 3))).toEqual(pages.results.map((r: any[]) => [r[0], String(r[1][0]), String(r[2][0])]))
    expect((await tableRows(table))[0][0]).toBe('/')
    const referrers = await tableRows(page.getByRole('table', { name: 'Referrers' }))
    expect(referrers[0]).toEqual(['google.com', '3', '6'])
    const devices = await tableRows(page.getByRole('table', { name: 'Devices' }))
    expect(devices.map((row) => row[0]).sort()).toEqual(['Desktop', 'Mobile', 'Tablet'])
    await page.getByText('Times in UTC').waitFor()

    await page.getByRole('checkbox', { name: 'Compare to previous period' }).uncheck()
    await eventually(() => visitors.textContent(), (text) => !String(text).includes('previous period'))
    await page.getByRole('checkbox', { name: 'Compare to previous period' }).check()
    await page.getByRole('figure', { name: 'Visitors' }).getByText('from the previous period').waitFor()
    await page.screenshot({ path: screenshot('console-web.png'), fullPage: false })
  }, 60_000)
})
