// posthog-js at its defaults (person_profiles "identified_only") in Chromium: anonymous visitors send their events
// with $process_person_profile false, and each still counts as a person, in daily active users, in web analytics'
// visitors and in a funnel alike; a visitor who signs in takes their anonymous events along.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
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

/** One visit: a page that loads posthog-js at its defaults, views itself, reads a pricing page, and may sign in. */
async function visit(signInAs: string | null): Promise<void> {
  const config = { token: PROJECT_KEY, host: service.url, signInAs }
  const html = `<!doctype html><html><head><meta charset="utf-8"></head><body>
<script src="/posthog.js"></script>
<script>
  const cfg = ${JSON.stringify(config)};
  posthog.init(cfg.token, { api_host: cfg.host, persistence: 'memory', autocapture: false, disable_session_recording: true,
    request_queue_config: { flush_interval_ms: 250 } });
  posthog.capture('viewed pricing', { plan: 'pro' });
  if (cfg.signInAs) posthog.identify(cfg.signInAs, { email: cfg.signInAs + '@example.com' });
  posthog.capture('signed up');
</script></body></html>`
  const site = await servePage(html, 'newest')
  const page = await newPage(browser)
  try {
    await page.goto(site.url)
    // posthog-js sends its queue every 250 ms: wait until this visit's last event is stored
    await page.waitForTimeout(1500)
  } finally {
    await page.context().close()
    site.stop()
  }
}

async function query(node: Record<string, unknown>): Promise<any> {
  const r = await service.api('/api/projects/1/query/', { method: 'POST', json: { query: node, refresh: 'force_blocking' } })
  expect(r.status).toBe(200)
  return r.body
}

test('anonymous visitors count as persons in DAU, web analytics and funnels; signing in moves their events', async () => {
  await visit(null)
  await visit(null)
  await visit('signed-in-visitor')
  // every event stored and its person mapped
  const deadline = Date.now() + 30_000
  let counts: unknown[] = []
  while (Date.now() < deadline) {
    counts = (await query({ kind: 'HogQLQuery', query: "SELECT count(), count(DISTINCT distinct_id), count(DISTINCT person_id), countIf(person_id IS NULL) FROM events WHERE event IN ('$pageview', 'viewed pricing', 'signed up')" })).results[0]
    if (Number(counts[0]) >= 9 && Number(counts[2]) === 3 && Number(counts[3]) === 0) break
    await Bun.sleep(250)
  }
  // three visits: a $pageview, "viewed pricing" and "signed up" each; the third visit under two distinct ids, one person
  expect(counts).toEqual([9, 4, 3, 0])

  // posthog-js sent the anonymous visits without person processing: no person profile made for them
  const anonymous = await service.api(`/api/projects/1/events/?event=${encodeURIComponent('viewed pricing')}&limit=10`)
  const flags = anonymous.body.results.map((e: { properties: Record<string, unknown> }) => e.properties.$process_person_profile)
  expect(flags.filter((f: unknown) => f === false).length).toBeGreaterThanOrEqual(2)
  const persons = await service.api('/api/projects/1/persons/')
  expect(persons.body.results.map((p: { distinct_ids: string[] }) => p.distinct_ids.includes('signed-in-visitor'))).toEqual([true])

  // the same three people everywhere
  const dau = await query({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], dateRange: { date_from: '-1d' }, interval: 'day' })
  expect(dau.results[0].data.reduce((a: number, b: number) => a + b, 0)).toBe(3)
  const web = await query({ kind: 'WebOverviewQuery', dateRange: { date_from: '-1d' } })
  expect(web.results.find((r: { key: string }) => r.key === 'visitors').value).toBe(3)
  const funnel = await query({ kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: 'viewed pricing' }, { kind: 'EventsNode', event: 'signed up' }], dateRange: { date_from: '-1d' } })
  expect(funnel.results.map((s: { count: number }) => s.count)).toEqual([3, 3])

  // the visitor who signed in: the anonymous $pageview carries the signed-in person's id
  const identify = await service.event('distinct_id=signed-in-visitor', (e) => e.event === '$identify')
  const anonId = identify.properties.$anon_distinct_id as string
  const byId = (await query({ kind: 'HogQLQuery', query: `SELECT distinct_id, person_id FROM events WHERE distinct_id IN ('signed-in-visitor', '${anonId}') GROUP BY distinct_id, person_id` })).results
  expect(byId).toHaveLength(2)
  expect(new Set(byId.map((r: unknown[]) => r[1])).size).toBe(1)
}, 120_000)
