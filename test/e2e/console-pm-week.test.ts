// A product manager's week in the console, in Debian's Chromium, on data sent by posthog-node (identified persons
// with a plan, their pageviews and purchases) and posthog-js (anonymous visits at its defaults): a trend and a funnel
// broken down by the person property "plan" (the funnel one per value), weekly retention, a dashboard, an experiment
// drafted without a metric, launched after its dialog, read with counts and a verdict, then deleted with its flag.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { PostHog } from 'posthog-node'
import { launchBrowser, newPage, servePage } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'
import { chartTable, eventually, queryAnswer, signedInPage, tableRows } from './console-session'

const EMAIL = 'pm-week@example.com'
const PASSWORD = 'console pm week password'
const FLAG = 'pm-checkout'
// identified persons: even ones on "pro", odd ones on "free"; every third buys
const PERSONS = 12
const plan = (i: number) => (i % 2 ? 'free' : 'pro')
const buys = (i: number) => i % 3 === 0

let service: E2EService
let browser: Browser
let page: Page


const runQuery = (node: Record<string, unknown>) => queryAnswer(service, node)

async function stored(where: string): Promise<number> {
  return Number((await runQuery({ kind: 'HogQLQuery', query: `SELECT count() FROM events WHERE ${where}` })).results[0][0])
}


const tableView = (name: string) => chartTable(page, name)

const go = (label: string) => page.getByRole('navigation').getByRole('link', { name: label, exact: true }).click()
const valueText = (v: unknown) => (v === '$$_posthog_breakdown_null_$$' || v === null ? '(none)' : String(v))
const eventsNode = (event: string) => ({ kind: 'EventsNode', event, name: event })

/** One anonymous visit with posthog-js at its defaults: a pageview and "viewed pricing". */
async function anonymousVisit(): Promise<void> {
  const html = `<!doctype html><html><head><meta charset="utf-8"></head><body>
<script src="/posthog.js"></script>
<script>
  posthog.init(${JSON.stringify(PROJECT_KEY)}, { api_host: ${JSON.stringify(service.url)}, persistence: 'memory', autocapture: false,
    disable_session_recording: true, request_queue_config: { flush_interval_ms: 250 } });
  posthog.capture('viewed pricing');
</script></body></html>`
  const site = await servePage(html, 'newest')
  const visitor = await newPage(browser)
  try {
    await visitor.goto(site.url)
    await visitor.waitForTimeout(1500)
  } finally {
    await visitor.context().close()
    site.stop()
  }
}

beforeAll(async () => {
  ;[service, browser] = await Promise.all([startService('embedded', { INIT_ADMIN_EMAIL: EMAIL, INIT_ADMIN_PASSWORD: PASSWORD }), launchBrowser()])
  const client = new PostHog(PROJECT_KEY, { host: service.url, flushAt: 50, flushInterval: 100 })
  const start = Date.now() - 3_600_000
  for (let i = 0; i < PERSONS; i++) {
    const distinctId = `customer-${i}`
    client.identify({ distinctId, properties: { plan: plan(i), email: `${distinctId}@example.com` } })
    client.capture({ distinctId, event: '$pageview', properties: { $session_id: `node-${i}`, $pathname: '/pricing' }, timestamp: new Date(start + i * 1000) })
    if (buys(i)) client.capture({ distinctId, event: 'purchased', properties: { revenue: 19.99 }, timestamp: new Date(start + i * 1000 + 60_000) })
  }
  await client.shutdown()
  await anonymousVisit()
  await anonymousVisit()
  const purchases = Array.from({ length: PERSONS }, (_, i) => i).filter(buys).length
  await eventually(() => stored(`event = 'purchased'`), (n) => n === purchases)
  await eventually(() => stored(`event = '$pageview'`), (n) => n >= PERSONS + 2)
  page = await signedInPage(browser, service, EMAIL, PASSWORD)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

describe("a product manager's week", () => {
  test('a trend by the person property "plan", saved and put on a dashboard', async () => {
    await go('Insights')
    await page.getByRole('group', { name: 'Series A' }).getByRole('combobox', { name: 'Event' }).fill('$pageview')
    await page.getByLabel('Properties of').selectOption('person')
    await page.getByLabel('Breakdown').fill('plan')
    await page.getByRole('list', { name: 'Legend' }).getByText('pro', { exact: true }).waitFor()
    const table = await tableView('Trend')
    const answer = await runQuery({
      kind: 'TrendsQuery',
      series: [{ ...eventsNode('$pageview'), math: 'total' }],
      interval: 'day',
      dateRange: { date_from: '-7d' },
      breakdownFilter: { breakdown: 'plan', breakdown_type: 'person', breakdown_limit: 10 },
    })
    const headers = (await table.locator('thead th').allTextContents()).slice(1)
    expect([...headers].sort()).toEqual(answer.results.map((r: any) => valueText(r.breakdown_value)).sort())
    const totals = (await tableRows(table)).at(-1)!
    for (const [i, name] of headers.entries()) expect(Number(totals[i + 1])).toBe(answer.results.find((r: any) => valueText(r.breakdown_value) === name).count)
    expect(answer.results.find((r: any) => r.breakdown_value === 'pro').count).toBe(PERSONS / 2)

    await page.getByLabel('Name', { exact: true }).fill('Pageviews by plan')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved as' }).waitFor()
    await go('Dashboards')
    await page.getByRole('button', { name: 'New dashboard' }).click()
    await page.getByLabel('Name').fill('PM week')
    await page.getByRole('button', { name: 'Create dashboard' }).click()
    await page.getByRole('heading', { name: 'PM week', level: 1 }).waitFor()
    await page.getByLabel('Add insight').selectOption({ label: 'Pageviews by plan' })
    await page.getByRole('button', { name: 'Add', exact: true }).click()
    await page.getByRole('article', { name: 'Pageviews by plan' }).getByRole('img', { name: 'Pageviews by plan' }).waitFor()
  })

  test('a funnel by plan draws one funnel per plan; weekly retention', async () => {
    await go('Insights')
    await page.getByRole('tab', { name: 'Funnel' }).click()
    await page.getByRole('group', { name: 'Step 1' }).getByRole('combobox', { name: 'Event' }).fill('$pageview')
    await page.getByRole('group', { name: 'Step 2' }).getByRole('combobox', { name: 'Event' }).fill('purchased')
    await page.getByLabel('Properties of').selectOption('person')
    await page.getByLabel('Breakdown').fill('plan')
    await page.getByRole('list', { name: 'Legend' }).getByText('free', { exact: true }).waitFor()
    const answer = await runQuery({
      kind: 'FunnelsQuery',
      series: [eventsNode('$pageview'), eventsNode('purchased')],
      dateRange: { date_from: '-30d' },
      funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day', funnelOrderType: 'ordered' },
      breakdownFilter: { breakdown: 'plan', breakdown_type: 'person', breakdown_limit: 10 },
    })
    const expected = answer.results.flatMap((steps: any[]) => steps.map((s: any, i: number) => [`${i + 1}. ${s.name}`, valueText(s.breakdown_value), String(s.count)]))
    const table = await tableView('Funnel')
    const rows = await eventually(() => tableRows(table), (r) => r.length === expected.length)
    expect(rows.map((r) => r.slice(0, 3))).toEqual(expected)
    const pro = answer.results.find((steps: any[]) => steps[0].breakdown_value === 'pro')
    expect(pro.map((s: any) => s.count)).toEqual([PERSONS / 2, Array.from({ length: PERSONS }, (_, i) => i).filter((i) => buys(i) && plan(i) === 'pro').length])

    await page.getByRole('tab', { name: 'Retention' }).click()
    await page.getByLabel('Period').selectOption('Week')
    await page.getByLabel('Date range').selectOption('-30d')
    const retention = await tableView('Retention')
    await retention.getByRole('columnheader', { name: 'Week 0' }).waitFor()
    const weekly = await runQuery({ kind: 'RetentionQuery', dateRange: { date_from: '-30d' }, retentionFilter: { period: 'Week', retentionType: 'retention_recurring', totalIntervals: 6, targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } } })
    const last = (await tableRows(retention)).at(-1)!
    expect(Number(last[1])).toBe(weekly.results.at(-1).values[0].count)
  })

  test('an experiment drafted without a metric, launched after its dialog, read with counts and a verdict, deleted with its flag', async () => {
    await go('Experiments')
    await page.getByRole('link', { name: 'New experiment' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Checkout button')
    await page.getByLabel('Feature flag key').fill(FLAG)
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('heading', { name: 'Checkout button', level: 1 }).waitFor()
    await page.getByRole('status').filter({ hasText: 'Draft' }).waitFor()
    const draft = (await service.api('/api/projects/1/experiments/')).body.results[0]
    expect(draft.metrics).toEqual([])
    // the metric comes later, as in PostHog
    const patched = await service.api(`/api/projects/1/experiments/${draft.id}/`, { method: 'PATCH', json: { metrics: [{ kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'purchased' }] }] } })
    expect(patched.status).toBe(200)
    await page.reload()
    await page.getByRole('button', { name: 'Launch' }).click()
    await page.getByRole('dialog', { name: 'Launch the experiment “Checkout button”?' }).getByRole('button', { name: 'Launch', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Running' }).waitFor()

    // posthog-node: 60 persons exposed to each variant, then 6 of the control and 24 of the test buy
    await Bun.sleep(1100)
    const PER_VARIANT = 60
    const buyers: Record<string, number> = { control: 6, test: 24 }
    const client = new PostHog(PROJECT_KEY, { host: service.url, flushAt: 100, flushInterval: 100 })
    for (const variant of ['control', 'test']) {
      for (let i = 0; i < PER_VARIANT; i++) client.capture({ distinctId: `${variant}-${i}`, event: '$feature_flag_called', properties: { $feature_flag: FLAG, $feature_flag_response: variant } })
    }
    await client.flush()
    await Bun.sleep(1100)
    for (const [variant, n] of Object.entries(buyers)) for (let i = 0; i < n; i++) client.capture({ distinctId: `${variant}-${i}`, event: 'purchased' })
    await client.shutdown()
    const results = await eventually(
      async () => (await service.api(`/api/projects/1/experiments/${draft.id}/results/?metric_index=0`)).body,
      (r) => r?.baseline?.number_of_samples === PER_VARIANT && r.variant_results?.[0]?.sum === buyers.test,
    )
    await page.getByRole('button', { name: 'Reload results' }).click()
    const table = page.getByRole('table', { name: 'Results' })
    const rows = await eventually(() => tableRows(table), (r) => r.length === 2 && r[0][1] === String(PER_VARIANT))
    expect(rows[0].slice(0, 3)).toEqual(['control', String(PER_VARIANT), `10% (${buyers.control} / ${PER_VARIANT})`])
    expect(rows[1].slice(0, 3)).toEqual(['test', String(PER_VARIANT), `40% (${buyers.test} / ${PER_VARIANT})`])
    const verdict = results.variant_results[0].significant ? 'Significant' : 'Not significant'
    expect(rows[1][5]).toBe(verdict)
    await page.getByRole('status').filter({ hasText: `${verdict}:` }).waitFor()

    // the flag cannot go while its experiment stays: the page says why, in words, without a raw field name
    await go('Feature flags')
    await page.getByRole('link', { name: FLAG, exact: true }).click()
    await page.getByRole('button', { name: `Delete feature flag ${FLAG}` }).click()
    await page.getByRole('dialog', { name: `Delete the feature flag ${FLAG}?` }).getByRole('button', { name: 'Delete', exact: true }).click()
    const refusal = page.getByRole('alert').filter({ hasText: 'experiment' })
    await refusal.waitFor()
    expect(await refusal.textContent()).not.toContain('(deleted)')
    await go('Experiments')
    await page.getByRole('link', { name: 'Checkout button' }).click()
    await page.getByRole('button', { name: 'Delete experiment Checkout button' }).click()
    await page.getByRole('dialog', { name: 'Delete the experiment “Checkout button”?' }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('heading', { name: 'Experiments', level: 1 }).waitFor()
    expect((await service.api('/api/projects/1/experiments/')).body.results).toEqual([])
    await go('Feature flags')
    await page.getByRole('link', { name: FLAG, exact: true }).click()
    await page.getByRole('button', { name: `Delete feature flag ${FLAG}` }).click()
    await page.getByRole('dialog', { name: `Delete the feature flag ${FLAG}?` }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('heading', { name: 'Feature flags', level: 1 }).waitFor()
    expect(await page.getByRole('link', { name: FLAG, exact: true }).count()).toBe(0)
  }, 90_000)
})
