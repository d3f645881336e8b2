// A dashboard of 100 tiles of insights, force-refreshed by several viewers at once (or a script in a loop): each
// refresh recomputed every tile, so six at once computed 600 insights. Now a project runs at most
// DASHBOARD_LIMITS.refreshesPerProject refreshes at a time; past it a dashboard answers at once with its stored
// results, each due tile saying why (`dashboard_refresh_busy`). Another project's /decide is timed meanwhile.
// Timings are printed; statuses, tile counts and refresh counts are asserted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { DASHBOARD_LIMITS } from '../../src/dashboards/validation'
import { BASE, json, learned, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

const TILES = 100
const VIEWERS = 6
const OTHER_KEY = 'phc_other_project_key_refresh_load'

async function refreshes(stack: Stack): Promise<Record<string, number>> {
  const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
  const out: Record<string, number> = {}
  for (const m of text.matchAll(/^insight_refreshes_total\{outcome="(\w+)"\} (\d+)/gm)) out[m[1]] = Number(m[2])
  return out
}

describe('a dashboard of 100 tiles refreshed by several viewers at once (embedded stores)', () => {
  let stack: Stack
  let dashboard: number
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20 })
    await createProject(stack.services.db.sql, { name: 'Other', token: OTHER_KEY })
    const day = Date.UTC(2024, 4, 6)
    const batch = Array.from({ length: 500 }, (_, i) => ({ event: `e${i % 10}`, timestamp: new Date(day + i * 60_000).toISOString(), properties: { distinct_id: `v${i % 40}`, plan: i % 3 ? 'free' : 'pro' } }))
    expect((await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))).status).toBe(200)
    await learned(stack, 60_000)
    const d = await stack.api('/api/projects/1/dashboards/', { method: 'POST', json: { name: 'Wall' } })
    dashboard = (await json(d)).id
    for (let i = 0; i < TILES; i++) {
      const query = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: `e${i % 10}`, math: i % 2 ? 'dau' : 'total' }], breakdownFilter: { breakdown: 'plan' }, dateRange: { date_from: '2024-05-01', date_to: '2024-05-10' } }
      const r = await stack.api('/api/projects/1/insights/', { method: 'POST', json: { name: `tile ${i}`, query, dashboards: [dashboard] } })
      expect(r.status).toBe(201)
    }
  }, 240_000)
  afterAll(async () => stack?.close())

  test(`${VIEWERS} force refreshes at once: at most ${DASHBOARD_LIMITS.refreshesPerProject} compute, the others answer the stored results`, async () => {
    const before = await refreshes(stack)
    let done = false
    const decideMs: number[] = []
    const probe = (async () => {
      while (!done) {
        const started = performance.now()
        const r = await stack.app.handle(new Request(`${BASE}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: OTHER_KEY, distinct_id: 'x' }) }))
        expect(r.status).toBe(200)
        decideMs.push(performance.now() - started)
        await Bun.sleep(50)
      }
    })()
    const started = performance.now()
    const answers = await Promise.all(Array.from({ length: VIEWERS }, () => stack.api(`/api/projects/1/dashboards/${dashboard}/?refresh=force_blocking`)))
    const bodies = await Promise.all(answers.map((r) => json(r)))
    const elapsed = performance.now() - started
    done = true
    await probe
    const after = await refreshes(stack)
    const delta = (outcome: string) => (after[outcome] ?? 0) - (before[outcome] ?? 0)
    decideMs.sort((a, b) => a - b)
    console.log(
      `${VIEWERS} × ${TILES} tiles: ${delta('stored')} computed, ${delta('skipped_busy')} busy, ${delta('skipped_budget')} out of budget in ${elapsed.toFixed(0)} ms; ` +
        `other project's /decide p50 ${decideMs[Math.floor(decideMs.length / 2)]?.toFixed(1)} ms, max ${decideMs[decideMs.length - 1]?.toFixed(1)} ms (${decideMs.length} asked)`,
    )
    expect(answers.every((r) => r.status === 200)).toBe(true)
    expect(bodies.every((b) => b.tiles.length === TILES)).toBe(true)
    expect(delta('stored') + delta('failed') + delta('skipped_budget')).toBeLessThanOrEqual(DASHBOARD_LIMITS.refreshesPerProject * TILES)
    const busy = bodies.filter((b) => b.tiles.some((t: { error?: { code: string } }) => t.error?.code === 'dashboard_refresh_busy'))
    expect(busy.length).toBeGreaterThanOrEqual(VIEWERS - DASHBOARD_LIMITS.refreshesPerProject)
    expect(delta('skipped_busy')).toBe(busy.length * TILES)
    // once they are done, a refresh computes again
    const again = await stack.api(`/api/projects/1/dashboards/${dashboard}/?refresh=force_blocking`)
    expect((await json(again)).tiles.some((t: { error?: { code: string } }) => t.error?.code === 'dashboard_refresh_busy')).toBe(false)
  }, 240_000)
})
