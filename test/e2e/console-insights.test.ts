// The console's Insights, Dashboards and Experiments pages, driven in Debian's Chromium by roles and names: a trend
// and a funnel built on the page and their table views compared with the query API's answers, saved as insights
// and shown as tiles of a dashboard (rename, remove, refresh), an experiment created, launched, read and stopped.
// Each page's screenshot goes to docs/.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { fileURLToPath } from 'node:url'
import { launchBrowser } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'
import { eventually, queryAnswer, signedInPage, tableRows } from './console-session'

const EMAIL = 'analyst@example.com'
const PASSWORD = 'console insights password'
const DAY = 86_400_000
const screenshot = (name: string) => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url))

let service: E2EService
let browser: Browser
let page: Page


async function batch(events: Record<string, unknown>[]): Promise<void> {
  const r = await fetch(`${service.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, batch: events }) })
  expect(r.status).toBe(200)
}

const runQuery = (node: Record<string, unknown>) => queryAnswer(service, node)

/** An input with a `list`: its datalist's options (the DOM types are not in the tests' lib). */
type SuggestingInput = { list: { options: ArrayLike<{ value: string }> } | null }

/** A table's body as text: each row's header cell, then its cells. */

const go = (label: string) => page.getByRole('navigation').getByRole('link', { name: label, exact: true }).click()

// what was stored: $pageview on the last three days (plan pro or free), signup → purchase for some persons
const PAGEVIEWS_PER_DAY = [5, 8, 3]
const SIGNUPS = 12
const PURCHASES = 5

beforeAll(async () => {
  ;[service, browser] = await Promise.all([startService('embedded', { INIT_ADMIN_EMAIL: EMAIL, INIT_ADMIN_PASSWORD: PASSWORD }), launchBrowser()])
  const now = Date.now()
  const events: Record<string, unknown>[] = []
  PAGEVIEWS_PER_DAY.forEach((n, day) => {
    const at = now - (PAGEVIEWS_PER_DAY.length - 1 - day) * DAY - 60_000
    for (let i = 0; i < n; i++) events.push({ event: '$pageview', distinct_id: `visitor-${i}`, timestamp: new Date(at - i * 1000).toISOString(), properties: { plan: i % 2 ? 'free' : 'pro' } })
  })
  for (let i = 0; i < SIGNUPS; i++) {
    events.push({ event: 'signup', distinct_id: `buyer-${i}`, timestamp: new Date(now - DAY - i * 60_000).toISOString() })
    if (i < PURCHASES) events.push({ event: 'purchase', distinct_id: `buyer-${i}`, timestamp: new Date(now - DAY - i * 60_000 + 30_000).toISOString() })
  }
  await batch(events)
  const stored = PAGEVIEWS_PER_DAY.reduce((a, b) => a + b, 0) + SIGNUPS + PURCHASES
  await eventually(() => service.api('/api/projects/1/events/?limit=1000'), (r) => r.body?.results?.length === stored)
  page = await signedInPage(browser, service, EMAIL, PASSWORD)
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

describe('console: insights', () => {
  test("build a trend broken down by a property; its table view holds the query API's numbers", async () => {
    await go('Insights')
    expect(await page.getByRole('tab', { name: 'Trends' }).getAttribute('aria-selected')).toBe('true')
    const series = page.getByRole('group', { name: 'Series A' })
    await series.getByRole('combobox', { name: 'Event' }).fill('$pageview')
    await series.getByRole('combobox', { name: 'Math' }).selectOption('total')
    await page.getByLabel('Date range').selectOption('-7d')
    await page.getByLabel('Interval').selectOption('day')
    await page.getByRole('img', { name: 'Trend' }).waitFor()
    await page.getByText('Table view').click()
    const table = page.getByRole('table', { name: 'Trend as a table' })
    const plain = await runQuery({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }], interval: 'day', dateRange: { date_from: '-7d' } })
    const expected = plain.results[0].labels.map((label: string, i: number) => [label, String(plain.results[0].data[i])])
    expect(plain.results[0].count).toBe(PAGEVIEWS_PER_DAY.reduce((a, b) => a + b, 0))
    expect((await tableRows(table)).slice(0, -1)).toEqual(expected)

    await page.getByLabel('Breakdown').fill('plan')
    await page.getByRole('img', { name: 'Trend' }).waitFor()
    await page.getByRole('columnheader', { name: 'pro' }).waitFor()
    const broken = await runQuery({
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
      interval: 'day',
      dateRange: { date_from: '-7d' },
      breakdownFilter: { breakdown: 'plan', breakdown_type: 'event', breakdown_limit: 10 },
    })
    const headers = (await table.locator('thead th').allTextContents()).slice(1)
    expect([...headers].sort()).toEqual(broken.results.map((r: any) => r.label).sort())
    const rows = await tableRows(table)
    for (const [column, name] of headers.entries()) {
      const result = broken.results.find((r: any) => r.label === name)
      expect(rows.slice(0, -1).map((row) => Number(row[column + 1]))).toEqual(result.data)
      expect(Number(rows[rows.length - 1][column + 1])).toBe(result.count)
    }
    // the legend names each line
    expect(await page.getByRole('list', { name: 'Legend' }).getByRole('listitem').allTextContents()).toEqual(headers)
    await page.screenshot({ path: screenshot('console-insights.png'), fullPage: true })

    await page.getByLabel('Name').fill('Pageviews by plan')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved as' }).waitFor()
    const saved = (await service.api('/api/projects/1/insights/?search=Pageviews')).body.results
    expect(saved.map((i: any) => i.query.source.kind)).toEqual(['TrendsQuery'])

    // a property filter narrows it; compare adds the previous period
    await page.getByLabel('Filter property').fill('plan')
    await page.getByLabel('Operator').selectOption('exact')
    await page.getByLabel('Filter value').fill('pro')
    // the value input (a combobox named by its label) suggests the property's recent values, most frequent first
    const valueInput = page.getByRole('combobox', { name: 'Filter value' })
    const suggested = await eventually(() => valueInput.evaluate((input) => Array.from((input as unknown as SuggestingInput).list?.options ?? [], (o) => o.value)), (values) => values.length === 2)
    expect(suggested).toEqual(['pro', 'free'])
    await page.getByLabel('Compare to the previous period').check()
    await page.getByLabel('Breakdown').fill('')
    await page.getByRole('columnheader', { name: '$pageview (previous)' }).waitFor()
    const filtered = await runQuery({
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
      interval: 'day',
      dateRange: { date_from: '-7d' },
      properties: [{ key: 'plan', operator: 'exact', type: 'event', value: 'pro' }],
      compareFilter: { compare: true },
    })
    const current = filtered.results.find((r: any) => r.compare_label === 'current')
    const totals = (await tableRows(table)).at(-1)!
    expect(totals.slice(1).map(Number)).toEqual([current.count, filtered.results.find((r: any) => r.compare_label === 'previous').count])
    expect(current.count).toBe(PAGEVIEWS_PER_DAY.reduce((sum, n) => sum + Math.ceil(n / 2), 0))
  })

  test("build a funnel with a window and an order; its steps are the query API's", async () => {
    await page.getByRole('tab', { name: 'Funnel' }).click()
    await page.getByRole('group', { name: 'Step 1' }).getByRole('combobox', { name: 'Event' }).fill('signup')
    await page.getByRole('group', { name: 'Step 2' }).getByRole('combobox', { name: 'Event' }).fill('purchase')
    await page.getByLabel('Conversion window').fill('1')
    await page.getByLabel('Window unit').selectOption('hour')
    await page.getByLabel('Order').selectOption('strict')
    await page.getByRole('img', { name: 'Funnel' }).waitFor()
    await page.getByText('Table view').click()
    const table = page.getByRole('table', { name: 'Funnel as a table' })
    await table.getByRole('rowheader', { name: '2. purchase' }).waitFor()
    const answer = await runQuery({
      kind: 'FunnelsQuery',
      series: [
        { kind: 'EventsNode', event: 'signup' },
        { kind: 'EventsNode', event: 'purchase' },
      ],
      dateRange: { date_from: '-30d' },
      funnelsFilter: { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'hour', funnelOrderType: 'strict' },
    })
    expect(answer.results.map((s: any) => s.count)).toEqual([SIGNUPS, PURCHASES])
    const rows = await eventually(
      () => tableRows(table),
      (r) => r.length === 2 && Number(r[0][1]) === SIGNUPS,
    )
    expect(rows.map((r) => [r[0], Number(r[1])])).toEqual(answer.results.map((s: any, i: number) => [`${i + 1}. ${s.name}`, s.count]))
    expect(rows[1][2]).toBe(`${Math.round((PURCHASES / SIGNUPS) * 1000) / 10}%`)
    await page.getByLabel('Name').fill('Signup to purchase')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved as' }).waitFor()
  })

  test('a saved insight opens in the builder from the list', async () => {
    await page.getByRole('table', { name: 'Saved insights' }).getByRole('link', { name: 'Pageviews by plan' }).click()
    await page.getByRole('heading', { name: 'Insight Pageviews by plan', level: 1 }).waitFor()
    expect(await page.getByRole('tab', { name: 'Trends' }).getAttribute('aria-selected')).toBe('true')
    expect(await page.getByLabel('Breakdown').inputValue()).toBe('plan')
    await page.getByRole('img', { name: 'Trend' }).waitFor()
    await go('Insights')
    await page.getByRole('heading', { name: 'Insights', level: 1 }).waitFor()
  })

  test('the Retention tab draws what the API answers, or says the server does not answer it', async () => {
    await page.getByRole('tab', { name: 'Retention' }).click()
    const probe = await service.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: 8 } } } })
    if (probe.status === 400 && probe.body.attr === 'query__kind') await page.getByRole('status').filter({ hasText: 'does not answer retention' }).waitFor()
    else await page.getByRole('img', { name: 'Retention' }).waitFor()
  })
})

describe('console: dashboards', () => {
  test('create a dashboard, add both insights as tiles drawn with the same charts, rename it, remove a tile, refresh', async () => {
    await go('Dashboards')
    await page.getByRole('button', { name: 'New dashboard' }).click()
    await page.getByLabel('Name').fill('Growth')
    await page.getByRole('button', { name: 'Create dashboard' }).click()
    await page.getByRole('heading', { name: 'Growth', level: 1 }).waitFor()
    for (const name of ['Pageviews by plan', 'Signup to purchase']) {
      await page.getByLabel('Add insight').selectOption({ label: name })
      await page.getByRole('button', { name: 'Add', exact: true }).click()
      await page.getByRole('article', { name }).getByRole('img', { name }).waitFor()
    }
    const id = (await service.api('/api/projects/1/dashboards/')).body.results[0].id
    const tiles = async () => (await service.api(`/api/projects/1/dashboards/${id}/`)).body.tiles.filter((t: any) => !t.deleted).map((t: any) => t.insight.name)
    expect((await tiles()).sort()).toEqual(['Pageviews by plan', 'Signup to purchase'])
    // a tile's chart says what the insight's answer says
    const funnelTile = page.getByRole('article', { name: 'Signup to purchase' })
    await funnelTile.getByText('Table view').click()
    expect((await tableRows(funnelTile.getByRole('table'))).map((r) => Number(r[1]))).toEqual([SIGNUPS, PURCHASES])
    await page.screenshot({ path: screenshot('console-dashboard.png'), fullPage: true })

    await page.getByLabel('Name').fill('Growth weekly')
    await page.getByRole('button', { name: 'Rename' }).click()
    await page.getByRole('heading', { name: 'Growth weekly', level: 1 }).waitFor()
    expect((await service.api(`/api/projects/1/dashboards/${id}/`)).body.name).toBe('Growth weekly')

    await page.getByRole('button', { name: 'Remove Signup to purchase' }).click()
    await page.getByRole('dialog', { name: 'Remove “Signup to purchase” from this dashboard?' }).getByRole('button', { name: 'Remove', exact: true }).click()
    await page.getByRole('article', { name: 'Signup to purchase' }).waitFor({ state: 'detached' })
    expect(await tiles()).toEqual(['Pageviews by plan'])

    const before = (await service.api(`/api/projects/1/dashboards/${id}/`)).body.tiles.find((t: any) => !t.deleted).insight.last_refresh
    await page.getByRole('button', { name: 'Refresh' }).click()
    const after = await eventually(
      async () => (await service.api(`/api/projects/1/dashboards/${id}/`)).body.tiles.find((t: any) => !t.deleted).insight.last_refresh,
      (v) => v !== before,
    )
    expect(after).not.toBe(before)
    await page.getByRole('article', { name: 'Pageviews by plan' }).getByRole('img', { name: 'Pageviews by plan' }).waitFor()
  })
})

describe('console: experiments', () => {
  test("a refused experiment says the API's reason and leaves no flag behind", async () => {
    await go('Experiments')
    await page.getByRole('link', { name: 'New experiment' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Broken split')
    await page.getByLabel('Feature flag key').fill('broken-split')
    await page.getByRole('group', { name: 'Variant 2' }).getByLabel('Percentage').fill('60')
    await page.getByText('The percentages add up to 110%').waitFor()
    await page.getByLabel('Metric event').fill('purchase')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('alert').filter({ hasText: 'must sum to 100' }).waitFor()
    expect((await service.api('/api/projects/1/feature_flags/?search=broken-split')).body.results).toEqual([])
    expect((await service.api('/api/projects/1/experiments/')).body.count).toBe(0)
  })

  test('create and launch an experiment; its results page says when there is not enough data, then shows each variant', async () => {
    await go('Experiments')
    await page.getByRole('link', { name: 'New experiment' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Pricing page')
    await page.getByLabel('Feature flag key').fill('pricing-page')
    await page.getByLabel('Metric event').fill('purchase')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('heading', { name: 'Pricing page', level: 1 }).waitFor()
    await page.getByRole('status').filter({ hasText: 'Draft' }).waitFor()
    await page.getByRole('button', { name: 'Launch' }).click()
    // Launch asks first: nothing changes until the dialog's own "Launch"
    const launch = page.getByRole('dialog', { name: 'Launch the experiment “Pricing page”?' })
    await launch.waitFor()
    expect((await service.api('/api/projects/1/experiments/')).body.results[0].status).toBe('draft')
    await launch.getByRole('button', { name: 'Launch', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Running' }).waitFor()
    await page.getByRole('status').filter({ hasText: 'Not enough data yet' }).waitFor()
    const experiment = (await service.api('/api/projects/1/experiments/')).body.results[0]
    expect(experiment.status).toBe('running')
    expect(experiment.feature_flag.active).toBe(true)

    // 60 persons see each variant; 6 of the control and 24 of the test buy afterwards
    const PER_VARIANT = 60
    const buyers: Record<string, number> = { control: 6, test: 24 }
    await Bun.sleep(1100)
    const exposures: Record<string, unknown>[] = []
    for (const variant of ['control', 'test']) {
      for (let i = 0; i < PER_VARIANT; i++) exposures.push({ event: '$feature_flag_called', distinct_id: `${variant}-${i}`, properties: { $feature_flag: 'pricing-page', $feature_flag_response: variant } })
    }
    await batch(exposures)
    await Bun.sleep(300)
    await batch(Object.entries(buyers).flatMap(([variant, n]) => Array.from({ length: n }, (_, i) => ({ event: 'purchase', distinct_id: `${variant}-${i}` }))))
    const results = await eventually(
      async () => (await service.api(`/api/projects/1/experiments/${experiment.id}/results/?metric_index=0`)).body,
      (r) => r?.baseline?.number_of_samples === PER_VARIANT && r.variant_results[0]?.sum === buyers.test,
    )
    expect(results.baseline.sum).toBe(buyers.control)
    await page.getByRole('button', { name: 'Reload results' }).click()
    const table = page.getByRole('table', { name: 'Results' })
    await table.getByRole('cell', { name: String(PER_VARIANT) }).first().waitFor()
    expect(await table.locator('thead th').allTextContents()).toEqual(['Variant', 'Exposures', 'Conversion', 'Chance to win', '95% interval', 'Significance'])
    const rows = await eventually(
      () => tableRows(table),
      (r) => r.length === 2 && r[0][1] === String(PER_VARIANT),
    )
    const test = results.variant_results[0]
    expect(rows[0]).toEqual(['control', String(PER_VARIANT), `10% (${buyers.control} / ${PER_VARIANT})`, '—', '—', '—'])
    expect(rows[1].slice(0, 4)).toEqual(['test', String(PER_VARIANT), `40% (${buyers.test} / ${PER_VARIANT})`, `${Number((test.chance_to_win * 100).toFixed(1))}%`])
    expect(rows[1][5]).toBe(test.significant ? 'Significant' : 'Not significant')
    await page.getByRole('status').filter({ hasText: test.significant ? 'Significant: test differs from control' : 'Not significant' }).waitFor()
    expect(test.chance_to_win).toBeGreaterThan(0.95)
    expect(await page.getByRole('status').filter({ hasText: 'Not enough data yet' }).count()).toBe(0)
    await page.screenshot({ path: screenshot('console-experiment.png'), fullPage: true })

    await page.getByRole('button', { name: 'Stop' }).click()
    await page.getByRole('dialog', { name: 'Stop the experiment “Pricing page”?' }).getByRole('button', { name: 'Stop', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Complete' }).waitFor()
    expect((await service.api(`/api/projects/1/experiments/${experiment.id}/`)).body.status).toBe('complete')
  })
})
