// The console's round-three pages in Debian's Chromium, driven by roles and names: Web analytics (the five figures
// and the top tables against the query API's answers), the Insights tabs Lifecycle and Stickiness, a breakdown by a
// person property, retention by week, rounded sums, deleting saved insights and experiments, Launch asking first,
// a draft experiment without a metric, and the project's timezone set in Settings and shown where times are.
// Screenshots of the new pages go to docs/.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { fileURLToPath } from 'node:url'
import { launchBrowser } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'
import { chartTable, eventually, queryAnswer, signedInPage, tableRows } from './console-session'

const EMAIL = 'pm@example.com'
const PASSWORD = 'console web password'
const DAY = 86_400_000
const screenshot = (name: string) => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url))

let service: E2EService
let browser: Browser
let page: Page


const runQuery = (node: Record<string, unknown>) => queryAnswer(service, node)


const tableView = (name: string) => chartTable(page, name)

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
  page = await signedInPage(browser, service, EMAIL, PASSWORD)
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

/** The trend node the Insights page sends for one series, so the test asks the API the same question. */
const seriesNode = (event: string, extra: Record<string, unknown> = {}) => ({ kind: 'EventsNode', event, name: event, ...extra })

describe('console: insights, round three', () => {
  test('Lifecycle and Stickiness tabs draw their chart and a table with the query API\'s numbers', async () => {
    await go('Insights')
    await page.getByRole('tab', { name: 'Lifecycle' }).click()
    await page.getByRole('combobox', { name: 'Event' }).fill('$pageview')
    await tableView('Lifecycle')
    const lifecycle = await runQuery({ kind: 'LifecycleQuery', series: [seriesNode('$pageview')], interval: 'day', dateRange: { date_from: '-7d' } })
    const table = page.getByRole('table', { name: 'Lifecycle as a table' })
    expect((await table.locator('thead th').allTextContents()).slice(1)).toEqual(['New', 'Returning', 'Resurrecting', 'Dormant'])
    const rows = await tableRows(table)
    const byStatus = ['new', 'returning', 'resurrecting', 'dormant'].map((status) => lifecycle.results.find((r: any) => r.status === status))
    expect(rows.slice(0, -1).map((row) => row.slice(1).map(Number))).toEqual(byStatus[0].data.map((_: number, i: number) => byStatus.map((r: any) => r.data[i])))
    expect(rows.slice(0, -1).map((row) => row[0])).toEqual(byStatus[0].labels)
    expect(byStatus.slice(0, 3).reduce((n: number, r: any) => n + r.count, 0)).toBeGreaterThan(0)
    await page.getByText('Dates in UTC').waitFor()
    await page.getByText('The last bar is the current period, not over yet').waitFor()
    // drawn as PostHog draws it: stacked bars, new, returning and resurrecting above the axis, dormant below
    const chart = page.getByRole('img', { name: 'Lifecycle', exact: true })
    const segments = await chart.locator('rect title').allTextContents()
    const drawn = byStatus.flatMap((r: any) => r.data.filter((v: number) => v !== 0)).length
    expect(segments.length).toBe(drawn)
    expect(await page.getByRole('list', { name: 'Legend' }).getByRole('listitem').allTextContents()).toEqual(['New', 'Returning', 'Resurrecting', 'Dormant'])
    // over 14 days the visitors of 10 days ago are new, then dormant (below the axis), then resurrecting today
    await page.getByLabel('Date range').selectOption('-14d')
    await chart.locator('rect title', { hasText: 'dormant' }).first().waitFor({ state: 'attached' })
    await chart.locator('rect title', { hasText: 'resurrecting' }).first().waitFor({ state: 'attached' })
    await page.screenshot({ path: screenshot('console-lifecycle.png') })
    await page.getByLabel('Date range').selectOption('-7d')

    await page.getByRole('tab', { name: 'Stickiness' }).click()
    await page.getByRole('combobox', { name: 'Event' }).fill('$pageview')
    await tableView('Stickiness')
    const stickiness = await runQuery({ kind: 'StickinessQuery', series: [seriesNode('$pageview')], interval: 'day', dateRange: { date_from: '-7d' } })
    const sticky = await tableRows(page.getByRole('table', { name: 'Stickiness as a table' }))
    expect(sticky.slice(0, -1)).toEqual(stickiness.results[0].labels.map((label: string, i: number) => [label, String(stickiness.results[0].data[i])]))
  })

  test('a trend broken down by a person property, and a sum rounded and named by its property', async () => {
    await page.getByRole('tab', { name: 'Trends' }).click()
    const series = page.getByRole('group', { name: 'Series A' })
    await series.getByRole('combobox', { name: 'Event' }).fill('$pageview')
    await page.getByLabel('Properties of').selectOption('person')
    const breakdown = page.getByRole('combobox', { name: 'Breakdown' })
    const offered = await eventually(() => breakdown.evaluate((input) => Array.from((input as unknown as { list: { options: ArrayLike<{ value: string }> } | null }).list?.options ?? [], (o) => o.value)), (v) => v.includes('plan'))
    expect(offered).toContain('plan')
    await breakdown.fill('plan')
    await page.getByRole('img', { name: 'Trend', exact: true }).waitFor()
    await Bun.sleep(500)
    await tableView('Trend')
    await page.getByRole('columnheader', { name: 'pro' }).waitFor()
    const answer = await runQuery({
      kind: 'TrendsQuery',
      series: [seriesNode('$pageview', { math: 'total' })],
      interval: 'day',
      dateRange: { date_from: '-7d' },
      breakdownFilter: { breakdown: 'plan', breakdown_type: 'person', breakdown_limit: 10 },
    })
    const table = page.getByRole('table', { name: 'Trend as a table' })
    const headers = (await table.locator('thead th').allTextContents()).slice(1)
    expect([...headers].sort()).toEqual(['free', 'pro'])
    const totals = (await tableRows(table)).at(-1)!
    for (const [i, name] of headers.entries()) expect(Number(totals[i + 1])).toBe(answer.results.find((r: any) => r.breakdown_value === name).count)
    expect(answer.results.find((r: any) => r.breakdown_value === 'pro').count).toBe(VISITS.filter((v) => v.plan === 'pro').reduce((n, v) => n + v.paths.length, 0))

    // a filter on a person property: only the pro persons' pageviews, as the API counts them
    await breakdown.fill('')
    await page.getByLabel('Filter on').selectOption('person')
    await page.getByRole('combobox', { name: 'Filter property' }).fill('plan')
    await page.getByRole('combobox', { name: 'Filter value' }).fill('pro')
    const filtered = await runQuery({
      kind: 'TrendsQuery',
      series: [seriesNode('$pageview', { math: 'total' })],
      interval: 'day',
      dateRange: { date_from: '-7d' },
      properties: [{ key: 'plan', operator: 'exact', type: 'person', value: 'pro' }],
    })
    expect(filtered.results[0].count).toBe(answer.results.find((r: any) => r.breakdown_value === 'pro').count)
    await page.getByRole('columnheader', { name: '$pageview' }).waitFor()
    const proTotal = await eventually(async () => (await tableRows(table)).at(-1)![1], (t) => Number(t) === filtered.results[0].count)
    expect(Number(proTotal)).toBe(filtered.results[0].count)
    await page.getByRole('combobox', { name: 'Filter property' }).fill('')
    await page.getByLabel('Filter on').selectOption('event')

    await page.getByLabel('Properties of').selectOption('event')
    await series.getByRole('combobox', { name: 'Event' }).fill('purchased')
    await series.getByRole('combobox', { name: 'Math' }).selectOption('sum')
    await series.getByRole('combobox', { name: 'Math property' }).fill('revenue')
    await page.getByRole('list', { name: 'Legend' }).getByText('Sum of revenue').waitFor()
    await tableView('Trend')
    await page.getByRole('columnheader', { name: 'Sum of revenue' }).waitFor()
    await page.getByRole('list', { name: 'Legend' }).getByText('Sum of revenue').waitFor()
    const sums = await tableRows(table)
    expect(sums.at(-1)![1]).toBe('383.94')
    expect(sums.some((row) => row[1].length > 8)).toBe(false)
  })

  test('a funnel broken down by a property draws one funnel per value, as the API answers', async () => {
    await page.getByRole('tab', { name: 'Funnel' }).click()
    await page.getByRole('group', { name: 'Step 1' }).getByRole('combobox', { name: 'Event' }).fill('$pageview')
    await page.getByRole('group', { name: 'Step 2' }).getByRole('combobox', { name: 'Event' }).fill('purchased')
    await page.getByLabel('Breakdown').fill('$device_type')
    await page.getByRole('list', { name: 'Legend' }).getByText('Desktop').waitFor()
    const table = await tableView('Funnel')
    await table.getByRole('columnheader', { name: 'Breakdown' }).waitFor()
    const answer = await runQuery({
      kind: 'FunnelsQuery',
      series: [seriesNode('$pageview'), seriesNode('purchased')],
      dateRange: { date_from: '-30d' },
      funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day', funnelOrderType: 'ordered' },
      breakdownFilter: { breakdown: '$device_type', breakdown_type: 'event', breakdown_limit: 10 },
    })
    const expected = answer.results.flatMap((steps: any[]) => steps.map((s: any, i: number) => [`${i + 1}. ${s.name}`, String(s.breakdown_value), String(s.count)]))
    const rows = await eventually(() => tableRows(table), (r) => r.length === expected.length)
    expect(rows.map((r) => r.slice(0, 3))).toEqual(expected)
    const desktop = rows.filter((r) => r[1] === 'Desktop').map((r) => Number(r[2]))
    expect(desktop).toEqual([2, 2])
    await page.getByRole('list', { name: 'Legend' }).getByText('Tablet').waitFor()

    // by a person property: one funnel per plan, as the API answers
    await page.getByLabel('Properties of').selectOption('person')
    await page.getByLabel('Breakdown').fill('plan')
    await page.getByRole('list', { name: 'Legend' }).getByText('pro', { exact: true }).waitFor()
    const byPlan = await runQuery({
      kind: 'FunnelsQuery',
      series: [seriesNode('$pageview'), seriesNode('purchased')],
      dateRange: { date_from: '-30d' },
      funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day', funnelOrderType: 'ordered' },
      breakdownFilter: { breakdown: 'plan', breakdown_type: 'person', breakdown_limit: 10 },
    })
    const planRows = byPlan.results.flatMap((steps: any[]) => steps.map((s: any, i: number) => [`${i + 1}. ${s.name}`, String(s.breakdown_value), String(s.count)]))
    const planTable = await tableView('Funnel')
    const shown = await eventually(() => tableRows(planTable), (r) => r.length === planRows.length && r.some((row) => row[1] === 'pro'))
    expect(shown.map((r) => r.slice(0, 3))).toEqual(planRows)
    expect(shown.filter((r) => r[1] === 'pro').map((r) => Number(r[2]))).toEqual([3, 2])
    await page.getByLabel('Breakdown').fill('')
    await page.getByLabel('Properties of').selectOption('event')
  })

  test('an action as a trends series and as a funnel step, as the query API answers them', async () => {
    const created = await service.api('/api/projects/1/actions/', { method: 'POST', json: { name: 'Bought something', steps: [{ event: 'purchased' }] } })
    expect(created.status).toBe(201)
    const action = { kind: 'ActionsNode', id: created.body.id, name: 'Bought something' }
    // the Insights page reads the project's actions when it opens
    await go('Live events')
    await go('Insights')
    await page.getByRole('tab', { name: 'Trends' }).click()
    const series = page.getByRole('group', { name: 'Series A' })
    await series.getByRole('combobox', { name: 'Action' }).selectOption({ label: 'Bought something' })
    expect(await series.getByRole('combobox', { name: 'Event' }).isDisabled()).toBe(true)
    const trend = await runQuery({ kind: 'TrendsQuery', series: [{ ...action, math: 'total' }], interval: 'day', dateRange: { date_from: '-7d' } })
    expect(trend.results[0].count).toBe(REVENUES.length)
    const trendTable = await tableView('Trend')
    const totals = await eventually(() => tableRows(trendTable), (rows) => rows.at(-1)?.[1] === String(trend.results[0].count))
    expect(totals.at(-1)).toEqual(['Total', String(REVENUES.length)])

    await page.getByRole('tab', { name: 'Funnel' }).click()
    await page.getByRole('group', { name: 'Step 1' }).getByRole('combobox', { name: 'Event' }).fill('$pageview')
    await page.getByRole('group', { name: 'Step 2' }).getByRole('combobox', { name: 'Action' }).selectOption({ label: 'Bought something' })
    const funnel = await runQuery({
      kind: 'FunnelsQuery',
      series: [seriesNode('$pageview'), action],
      dateRange: { date_from: '-30d' },
      funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day', funnelOrderType: 'ordered' },
    })
    const expected = funnel.results.map((s: any, i: number) => [`${i + 1}. ${s.name}`, String(s.count)])
    expect(expected[1]).toEqual(['2. Bought something', String(REVENUES.length)])
    const funnelTable = await tableView('Funnel')
    const rows = await eventually(() => tableRows(funnelTable), (r) => r.length === 2 && r[1][0] === '2. Bought something')
    expect(rows.map((r) => r.slice(0, 2))).toEqual(expected)
    await page.screenshot({ path: screenshot('console-actions.png') })
    // back to events for the tests after this one
    await page.getByRole('group', { name: 'Step 2' }).getByRole('combobox', { name: 'Action' }).selectOption({ label: 'No action' })
    await page.getByRole('tab', { name: 'Trends' }).click()
    await series.getByRole('combobox', { name: 'Action' }).selectOption({ label: 'No action' })
  })

  test("retention by week, first time: a cohort size column, and periods not over yet left blank", async () => {
    await page.getByRole('tab', { name: 'Retention' }).click()
    await page.getByLabel('Period').selectOption('Week')
    await page.getByLabel('Retention type').selectOption('retention_first_time')
    await page.getByLabel('Date range').selectOption('-30d')
    const table = await tableView('Retention')
    await table.getByRole('columnheader', { name: 'Cohort size' }).waitFor()
    await eventually(() => table.locator('thead th').nth(2).textContent(), (t) => String(t).startsWith('Week'))
    const rows = await tableRows(table)
    const last = rows.at(-1)!
    // the current week's cohort: its size, its week 0, then blanks where PostHog leaves them
    expect(last[1]).toBe(last[2].split(' ')[0])
    expect(last.slice(3).every((cell) => cell === '')).toBe(true)
    // the table ends with the current week: cohort r has had rows - r weeks so far
    for (const [r, row] of rows.entries()) expect(row.slice(2).filter((cell) => cell !== '').length).toBe(Math.min(row.length - 2, rows.length - r))
    const total = rows.reduce((n, row) => n + Number(row[1]), 0)
    expect(total).toBe(VISITS.length)
    await page.screenshot({ path: screenshot('console-retention.png') })
  })

  test('a saved insight is deleted after a dialog', async () => {
    await page.getByLabel('Name', { exact: true }).fill('Weekly retention')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved as' }).waitFor()
    const saved = page.getByRole('table', { name: 'Saved insights' })
    await saved.getByRole('link', { name: 'Weekly retention' }).waitFor()
    await page.getByRole('button', { name: 'Delete insight Weekly retention' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete the insight “Weekly retention”?' })
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click()
    await eventually(() => saved.getByRole('link', { name: 'Weekly retention' }).count(), (n) => n === 0)
    expect(await page.getByText('No saved insight yet.').count()).toBe(1)
    const list = (await service.api('/api/projects/1/insights/?saved=true')).body
    expect(list.results.filter((i: any) => i.name === 'Weekly retention')).toEqual([])
  })
})

describe('console: experiments, round three', () => {
  test('a draft with only a name and a flag key; Launch asks first; Delete asks first', async () => {
    await go('Experiments')
    await page.getByRole('link', { name: 'New experiment' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Checkout copy')
    await page.getByLabel('Feature flag key').fill('checkout-copy')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('heading', { name: 'Checkout copy', level: 1 }).waitFor()
    await page.getByRole('status').filter({ hasText: 'Draft' }).waitFor()
    const created = (await service.api('/api/projects/1/experiments/')).body.results.find((e: any) => e.name === 'Checkout copy')
    expect(created.metrics).toEqual([])

    await page.getByRole('button', { name: 'Launch' }).click()
    const launch = page.getByRole('dialog', { name: 'Launch the experiment “Checkout copy”?' })
    await launch.getByRole('button', { name: 'Cancel' }).click()
    expect((await service.api(`/api/projects/1/experiments/${created.id}/`)).body.status).toBe('draft')
    await page.getByRole('button', { name: 'Launch' }).click()
    await launch.getByRole('button', { name: 'Launch', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Running' }).waitFor()
    expect((await service.api(`/api/projects/1/experiments/${created.id}/`)).body.feature_flag.active).toBe(true)

    await page.getByRole('button', { name: 'Delete experiment Checkout copy' }).click()
    await page.getByRole('dialog', { name: 'Delete the experiment “Checkout copy”?' }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('heading', { name: 'Experiments', level: 1 }).waitFor()
    expect((await service.api('/api/projects/1/experiments/')).body.results.filter((e: any) => e.name === 'Checkout copy')).toEqual([])
  })
})

describe('console: the project timezone', () => {
  test('set in Settings, then shown where times are', async () => {
    await go('Settings')
    const zone = page.getByRole('combobox', { name: 'Timezone' })
    expect(await zone.inputValue()).toBe('UTC')
    await zone.selectOption('Europe/Berlin')
    await page.getByRole('region', { name: 'Timezone' }).getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    expect((await service.api('/api/projects/1/')).body.timezone).toBe('Europe/Berlin')

    await go('Live events')
    await page.getByText('Times in Europe/Berlin').waitFor()
    // an event's time in Berlin, whatever the browser's zone
    const newest = (await service.api('/api/projects/1/events/?limit=1')).body.results[0]
    const berlin = await page.evaluate((ts) => new Date(ts).toLocaleString([], { timeZone: 'Europe/Berlin' }), newest.timestamp)
    await page.getByRole('table', { name: 'Newest events' }).getByText(berlin, { exact: false }).first().waitFor()
    await go('Insights')
    await page.getByText('Dates in Europe/Berlin').waitFor()
    await go('Web analytics')
    await page.getByText('Times in Europe/Berlin').waitFor()
  })
})
