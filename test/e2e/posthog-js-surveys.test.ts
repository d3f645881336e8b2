// Surveys with a real client: posthog-js (newest) in headless Chromium reads the remote config and GET
// /api/surveys/?token=, checks the survey's flags with /flags and shows a launched popover survey to a visitor on a
// matching page only; the visitor answers it in the survey's shadow root, and stats count the response. A stopped
// survey is no longer offered; a survey with a linked flag and a variant is shown only to that variant's visitors.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { launchBrowser, newPage, servePage, type PageServer } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'

let service: E2EService
let browser: Browser
let site: PageServer | undefined

beforeAll(async () => {
  ;[service, browser] = await Promise.all([startService(), launchBrowser()])
  // one page for every visitor: who they are, and their plan (sent with /flags), from the query string
  const html = `<!doctype html><html><head><meta charset="utf-8"></head><body><main><h1>Shop</h1></main>
<script src="/posthog.js"></script>
<script>
  const query = new URLSearchParams(location.search);
  posthog.init(${JSON.stringify(PROJECT_KEY)}, { api_host: ${JSON.stringify(service.url)}, persistence: 'memory', autocapture: false,
    capture_pageview: false, disable_session_recording: true, request_queue_config: { flush_interval_ms: 250 },
    bootstrap: { distinctID: query.get('visitor'), isIdentifiedID: true },
    loaded: function (ph) { if (query.get('plan')) ph.setPersonPropertiesForFlags({ plan: query.get('plan') }) } });
</script></body></html>`
  site = await servePage(html, 'newest')
}, 120_000)
afterAll(async () => {
  site?.stop()
  await browser?.close()
  await service?.stop()
})

const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString()

async function visit(query: string): Promise<Page> {
  const page = await newPage(browser)
  await page.goto(`${site!.url}/?${query}`)
  return page
}

/** Whether the page shows `text` within `ms` (posthog-js renders surveys in an open shadow root, which locators pierce). */
async function shows(page: Page, text: string, ms: number): Promise<boolean> {
  try {
    await page.getByText(text).first().waitFor({ state: 'visible', timeout: ms })
    return true
  } catch {
    return false
  }
}

test('a launched popover survey is shown to a matching visitor only, answered, and counted; stopped, it is not offered', async () => {
  const question = 'What would you improve?'
  const made = await service.api('/api/projects/1/surveys/', {
    method: 'POST',
    json: { name: 'Improve', type: 'popover', start_date: hourAgo(), questions: [{ type: 'open', question, buttonText: 'Send feedback' }], conditions: { url: 'page=pricing', urlMatchType: 'icontains' } },
  })
  expect(made.status).toBe(201)
  const id = made.body.id as string

  const elsewhere = await visit('visitor=v-elsewhere&page=home')
  const matching = await visit('visitor=v-matching&page=pricing')
  expect(await shows(matching, question, 20_000)).toBe(true)
  expect(await shows(elsewhere, question, 1000)).toBe(false)

  await matching.getByRole('textbox').first().fill('Cheaper shipping')
  // (the survey's submit button has no role-visible name in posthog-js's markup: found by its text)
  await matching.locator('button', { hasText: 'Send feedback' }).click({ timeout: 10_000 })
  await elsewhere.close()

  // the response is an ordinary event; stats count it (and the visitor who saw it)
  let stats: any
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await Bun.sleep(250)) {
    stats = (await service.api(`/api/projects/1/surveys/${id}/stats/`)).body
    if (stats.stats?.['survey sent']?.unique_persons === 1 && stats.stats['survey shown'].unique_persons === 1) break
  }
  expect(stats.stats['survey sent']).toMatchObject({ total_count: 1, unique_persons: 1 })
  expect(stats.stats['survey shown'].unique_persons).toBe(1)
  const sent = await service.event('event=survey%20sent', (e) => e.properties.$survey_id === id)
  expect(sent.properties[`$survey_response_${made.body.questions[0].id}`]).toBe('Cheaper shipping')
  await matching.close()

  // stopped: another matching visitor is not offered it
  expect((await service.api(`/api/projects/1/surveys/${id}/`, { method: 'PATCH', json: { end_date: new Date().toISOString() } })).status).toBe(200)
  const late = await visit('visitor=v-late&page=pricing')
  expect(await shows(late, question, 5000)).toBe(false)
  await late.close()
}, 120_000)

test("a survey with a linked flag and a variant is shown only to that variant's visitors", async () => {
  const flag = await service.api('/api/projects/1/feature_flags/', {
    method: 'POST',
    json: {
      key: 'checkout-redesign',
      filters: {
        groups: [{ properties: [{ key: 'plan', type: 'person', value: ['pro'], operator: 'exact' }], rollout_percentage: 100, variant: 'test' }, { properties: [], rollout_percentage: 100, variant: 'control' }],
        multivariate: { variants: [{ key: 'control', rollout_percentage: 100 }, { key: 'test', rollout_percentage: 0 }] },
      },
    },
  })
  expect(flag.status).toBe(201)
  const question = 'How is the new checkout?'
  const made = await service.api('/api/projects/1/surveys/', {
    method: 'POST',
    json: { name: 'Redesign', type: 'popover', start_date: hourAgo(), linked_flag_id: flag.body.id, questions: [{ type: 'open', question }], conditions: { url: 'page=checkout', urlMatchType: 'icontains', linkedFlagVariant: 'test' } },
  })
  expect(made.status).toBe(201)
  const control = await visit('visitor=v-free&plan=free&page=checkout')
  const variant = await visit('visitor=v-pro&plan=pro&page=checkout')
  expect(await shows(variant, question, 20_000)).toBe(true)
  expect(await shows(control, question, 1000)).toBe(false)
  await Promise.all([control.close(), variant.close()])
}, 120_000)
