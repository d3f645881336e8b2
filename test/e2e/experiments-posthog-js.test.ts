// An experiment with a real client: posthog-js 1.201.0 (the release that asks /decide) in headless Chromium gets
// its variant of the experiment's flag, reports it with $feature_flag_called, and the experiment counts that person
// once, in that variant.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { launchBrowser, newPage, servePage, type PageServer } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'

const FLAG = 'e2e-experiment'
let service: E2EService
let browser: Browser
let site: PageServer | undefined

beforeAll(async () => {
  ;[service, browser] = await Promise.all([startService(), launchBrowser()])
})
afterAll(async () => {
  site?.stop()
  await browser?.close()
  await service?.stop()
})

test('posthog-js gets its variant from /decide, reports the exposure, and the experiment counts it', async () => {
  const made = await service.api('/api/projects/1/experiments/', {
    method: 'POST',
    json: { name: 'Browser', feature_flag_key: FLAG, metrics: [{ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'clicked' } }] },
  })
  expect(made.status).toBe(201)
  const launch = await service.api(`/api/projects/1/experiments/${made.body.id}/`, { method: 'PATCH', json: { start_date: new Date(Date.now() - 60_000).toISOString() } })
  expect(launch.status).toBe(200)

  const cfg = { token: PROJECT_KEY, host: service.url, flag: FLAG }
  const html = `<!doctype html><html><head><meta charset="utf-8"></head><body><div id="flag">pending</div>
<script src="/posthog.js"></script>
<script>
  const cfg = ${JSON.stringify(cfg)};
  // the person is known from the start: with identify() after init, posthog-js reads the flag twice (for the
  // anonymous id, then for the user) and may report two variants, which the experiment rightly leaves out
  posthog.init(cfg.token, { api_host: cfg.host, persistence: 'memory', autocapture: false, capture_pageview: false,
    disable_session_recording: true, request_queue_config: { flush_interval_ms: 250 },
    bootstrap: { distinctID: 'e2e-buyer', isIdentifiedID: true } });
  posthog.onFeatureFlags(function () {
    const variant = posthog.getFeatureFlag(cfg.flag); // sends $feature_flag_called
    document.getElementById('flag').textContent = String(variant);
    if (variant) posthog.capture('clicked');
  });
</script></body></html>`
  site = await servePage(html, '1.201.0')
  const page = await newPage(browser)
  const asked: string[] = []
  page.on('request', (r) => {
    if (r.url().startsWith(service.url)) asked.push(new URL(r.url()).pathname)
  })
  await page.goto(site.url)
  let shown = 'pending'
  for (let i = 0; i < 150 && !['control', 'test'].includes(shown); i++) {
    await Bun.sleep(100)
    shown = (await page.textContent('#flag')) ?? ''
  }
  expect(['control', 'test']).toContain(shown)
  expect(asked).toContain('/decide/')

  // the exposure reaches the event store, its person resolved: then the experiment counts it
  let results: any = null
  const started = Date.now()
  for (let i = 0; i < 200; i++) {
    const r = await service.api(`/api/projects/1/experiments/${made.body.id}/results/`)
    expect(r.status).toBe(200)
    results = r.body
    const exposed = [results.baseline, ...results.variant_results].reduce((n: number, v: { number_of_samples: number }) => n + v.number_of_samples, 0)
    const clicked = [results.baseline, ...results.variant_results].reduce((n: number, v: { sum: number }) => n + v.sum, 0)
    if (exposed === 1 && clicked === 1) break
    await Bun.sleep(100)
  }
  console.log(`posthog-js shown "${shown}"; counted after ${Date.now() - started} ms`)
  const counted = [results.baseline, ...results.variant_results].find((v: { number_of_samples: number }) => v.number_of_samples > 0)
  expect(counted).toMatchObject({ key: shown, number_of_samples: 1, sum: 1 })
  expect(results.exposures_excluded).toBe(0)
}, 120_000)
