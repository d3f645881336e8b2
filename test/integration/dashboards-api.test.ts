// Saved insights and dashboards through HTTP, on real Postgres and on the embedded one: PostHog's shapes, short ids,
// paging, soft delete, putting insights on and off dashboards, results computed from real events (HogQL sources)
// and stored within their budget, a dashboard refresh with a failing tile, the caps, and project isolation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createPersonalKeyFor } from '../../src/projects/personal-keys'
import { createUser } from '../../src/projects/accounts'
import { createProject } from '../../src/projects/repository'
import { DASHBOARD_LIMITS } from '../../src/dashboards/validation'
import { DashboardService } from '../../src/dashboards/dashboard-service'
import { InsightService } from '../../src/dashboards/insight-service'
import type { InsightQueryRunner } from '../../src/dashboards/runner'
import { errors } from '../../src/http/errors'
import { BASE, json, learned, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const hogql = (query: string) => ({ kind: 'DataTableNode', source: { kind: 'HogQLQuery', query } })
const trends = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: { date_from: 'all' }, trendsFilter: { display: 'BoldNumber' } } }
/** a kind the query API does not serve */
// a kind PostHog has and phog does not serve
const paths = { kind: 'InsightVizNode', source: { kind: 'PathsQuery', pathsFilter: {} } }
const COUNTS = "SELECT event, count() AS n FROM events WHERE event IN ('$pageview', 'signup') GROUP BY event ORDER BY event"

const ev = (event: string, distinctId: string, properties: Record<string, unknown> = {}) => ({
  event,
  timestamp: '2024-05-06T10:00:00Z',
  properties: { distinct_id: distinctId, ...properties },
})

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`insights and dashboards API on ${postgres} Postgres`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, RATE_LIMIT_API_PER_MINUTE: 0 })
      const batch = [ev('$pageview', 'a'), ev('$pageview', 'b'), ev('$pageview', 'a'), ev('signup', 'b')]
      const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))
      expect(r.status).toBe(200)
      await learned(stack)
    }, 120_000)
    afterAll(() => stack?.close())

    const sql = () => stack.services.db.sql
    const post = async (what: 'insights' | 'dashboards', body: unknown, project: number | string = 1) => {
      const r = await stack.api(`/api/projects/${project}/${what}/`, { method: 'POST', json: body })
      const out = await json(r)
      if (r.status !== 201) throw new Error(`create ${what}: ${r.status} ${JSON.stringify(out)}`)
      return out
    }
    const patch = (what: 'insights' | 'dashboards', id: number, body: unknown) => stack.api(`/api/projects/1/${what}/${id}/`, { method: 'PATCH', json: body })
    const get = (path: string) => json(stack.api(`/api/projects/1/${path}`))
    const refused = async (r: Response | Promise<Response>, attr: string | null, code?: string) => {
      const res = await r
      const body = await json(res)
      expect({ status: res.status, type: body.type, attr: body.attr }).toEqual({ status: 400, type: 'validation_error', attr })
      if (code) expect(body.code).toBe(code)
      return body.detail as string
    }
    /** the stored results of project 1's HogQL source, read again until the store has the events */
    const refreshed = async (id: number) => {
      for (let i = 0; i < 100; i++) {
        const insight = await get(`insights/${id}/?refresh=true`)
        if (Array.isArray(insight.result) && insight.result.length === 2) return insight
        await Bun.sleep(100)
      }
      throw new Error('the events never reached the store')
    }

    test('create, retrieve, list, PATCH: PostHog fields, short_id, soft delete; DELETE is 405', async () => {
      const i = await post('insights', { name: 'Pageviews', description: 'daily', query: trends, tags: ['Growth', 'growth ', 'KPI'], saved: true })
      expect(i).toMatchObject({ name: 'Pageviews', derived_name: null, description: 'daily', query: trends, filters: {}, deleted: false, favorited: false, saved: true, tags: ['growth', 'kpi'], dashboards: [], dashboard_tiles: [], result: null, last_refresh: null, is_cached: false, timezone: 'UTC' })
      expect(i.short_id).toMatch(/^[A-Za-z0-9]{8}$/)
      expect(i.created_by).toMatchObject({ email: 'admin@localhost' })
      expect(i.last_modified_by).toMatchObject({ email: 'admin@localhost' })
      expect(i.created_at).toMatch(/Z$/)
      expect(await get(`insights/${i.id}/`)).toEqual(i)
      const other = await post('insights', { name: 'Other', query: hogql('SELECT 1 FROM events'), favorited: true })
      expect(other.short_id).not.toBe(i.short_id)

      const byShortId = await get(`insights/?short_id=${i.short_id}`)
      expect(byShortId).toMatchObject({ count: 1, next: null, previous: null })
      expect(byShortId.results[0]).toEqual(i)
      const ids = async (query: string) => (await get(`insights/?limit=1000&${query}`)).results.map((x: { id: number }) => x.id)
      expect(await ids('saved=true')).toContain(i.id)
      expect(await ids('saved=true')).not.toContain(other.id)
      expect(await ids('favorited=true')).toEqual(expect.arrayContaining([other.id]))
      expect(await ids('favorited=true')).not.toContain(i.id)
      expect(await ids('search=PAGEVIEW')).toEqual([i.id])

      const renamed = await json(patch('insights', i.id, { name: 'Views', derived_name: 'Pageview count', favorited: true }))
      expect(renamed).toMatchObject({ id: i.id, short_id: i.short_id, name: 'Views', derived_name: 'Pageview count', favorited: true, query: trends })
      expect(await json(patch('insights', i.id, { deleted: true }))).toMatchObject({ deleted: true })
      expect(await ids('')).not.toContain(i.id)
      expect(await get(`insights/${i.id}/`)).toMatchObject({ deleted: true })
      expect(await json(patch('insights', i.id, { deleted: false }))).toMatchObject({ deleted: false })
      const del = await stack.api(`/api/projects/1/insights/${i.id}/`, { method: 'DELETE' })
      expect(del.status).toBe(405)
      expect(await json(del)).toMatchObject({ code: 'method_not_allowed' })
      expect(del.headers.get('allow')).toContain('PATCH')
      expect((await stack.api('/api/projects/1/insights/99999999/')).status).toBe(404)
      expect((await stack.api('/api/projects/1/insights/abc/')).status).toBe(404)
      await refused(stack.api(`/api/projects/1/insights/?short_id=${'x'.repeat(40)}`), 'short_id')
    })

    test('paging: count, next and previous carry limit and offset; no insight skipped or repeated', async () => {
      for (let n = 0; n < 5; n++) await post('insights', { name: `paged-${n}`, tags: ['paged'] })
      const all = (await get('insights/?limit=1000&search=paged-')).results.map((x: { id: number }) => x.id)
      expect(all.length).toBe(5)
      const first = await get('insights/?limit=2&search=paged-')
      expect(first.count).toBe(5)
      expect(first.previous).toBeNull()
      const second = await json(stack.api(first.next.replace(BASE, '')))
      expect(new URL(second.previous).searchParams.get('offset')).toBeNull()
      const third = await json(stack.api(second.next.replace(BASE, '')))
      expect(third.next).toBeNull()
      expect([...first.results, ...second.results, ...third.results].map((x: { id: number }) => x.id)).toEqual(all)
      await refused(stack.api('/api/projects/1/insights/?limit=0'), 'limit')
      await refused(stack.api('/api/projects/1/insights/?saved=maybe'), 'saved')
    })

    test('a HogQL source is computed from real events on ?refresh, stored, and answered from the store after', async () => {
      const i = await post('insights', { name: 'Counts', query: hogql(COUNTS) })
      expect((await get(`insights/${i.id}/`)).result).toBeNull()
      const fresh = await refreshed(i.id)
      expect(fresh).toMatchObject({ result: [['$pageview', 3], ['signup', 1]], columns: ['event', 'n'], hasMore: false, is_cached: false, timezone: 'UTC' })
      expect(fresh.last_refresh).toMatch(/Z$/)
      const stored = await get(`insights/${i.id}/`)
      expect(stored).toMatchObject({ result: [['$pageview', 3], ['signup', 1]], columns: ['event', 'n'], is_cached: true, last_refresh: fresh.last_refresh })
      // blocking: the stored result is recent, so it is answered as it is
      expect(await get(`insights/${i.id}/?refresh=blocking`)).toMatchObject({ is_cached: true, last_refresh: fresh.last_refresh })
      expect(await get(`insights/${i.id}/?refresh=force_blocking`)).toMatchObject({ is_cached: false, result: [['$pageview', 3], ['signup', 1]] })
      // a bare HogQLQuery node runs too
      const bare = await post('insights', { name: 'Bare', query: { kind: 'HogQLQuery', query: "SELECT count() FROM events WHERE event = 'signup'" } })
      expect((await get(`insights/${bare.id}/?refresh=true`)).result).toEqual([[1]])
      // a new query drops the stored answer: it answered another question
      expect(await json(patch('insights', i.id, { query: hogql('SELECT count() FROM events') }))).toMatchObject({ result: null, last_refresh: null, is_cached: false })
      // the stored results ride along in the list (basic=true leaves them out)
      const listed = (await get('insights/?limit=1000')).results.find((x: { id: number }) => x.id === bare.id)
      expect(listed).toMatchObject({ result: [[1]], is_cached: true })
      expect((await get('insights/?limit=1000&basic=true')).results.find((x: { id: number }) => x.id === bare.id)).toMatchObject({ result: null })
    })

    test('a trend computed as the query API computes it; a kind not served, a bad query and a bad refresh: 400 naming the field, nothing stored', async () => {
      await refreshed((await post('insights', { name: 'Counts first', query: hogql(COUNTS) })).id) // the events are in the store
      const t = await post('insights', { name: 'Trend', query: trends })
      const computed = await get(`insights/${t.id}/?refresh=true`)
      expect(computed).toMatchObject({ result: [{ aggregated_value: 3, label: '$pageview' }], timezone: 'UTC' })
      const l = await post('insights', { name: 'Paths', query: paths })
      expect(await refused(stack.api(`/api/projects/1/insights/${l.id}/?refresh=true`), 'query__kind', 'invalid_input')).toContain('PathsQuery')
      await refused(stack.api(`/api/projects/1/insights/${t.id}/?refresh=sometimes`), 'refresh', 'invalid_choice')
      const broken = await post('insights', { name: 'Broken', query: hogql('SELECT nope(1) FROM events') })
      await refused(stack.api(`/api/projects/1/insights/${broken.id}/?refresh=true`), 'query')
      expect(await get(`insights/${broken.id}/`)).toMatchObject({ result: null, last_refresh: null })
      const empty = await post('insights', { name: 'No query yet' })
      await refused(stack.api(`/api/projects/1/insights/${empty.id}/?refresh=true`), 'query', 'required')
    })

    test('dashboards: tiles come and go through the insight\'s dashboards and the dashboard\'s tiles; a refresh with a failing tile still answers', async () => {
      const d = await post('dashboards', { name: 'Growth', description: 'weekly', pinned: true, tags: ['Team'] })
      expect(d).toMatchObject({ name: 'Growth', description: 'weekly', pinned: true, deleted: false, tags: ['team'], tiles: [], last_refresh: null, filters: {} })
      const counts = await post('insights', { name: 'Counts on a dashboard', query: hogql(COUNTS), dashboards: [d.id] })
      expect(counts.dashboards).toEqual([d.id])
      expect(counts.dashboard_tiles).toEqual([{ id: expect.any(Number), dashboard_id: d.id, deleted: false }])
      const trend = await post('insights', { name: 'Paths on a dashboard', query: paths })
      expect(await json(patch('insights', trend.id, { dashboards: [d.id] }))).toMatchObject({ dashboards: [d.id] })

      const stored = await get(`dashboards/${d.id}/`)
      expect(stored.tiles.map((t: { insight: { id: number } }) => t.insight.id)).toEqual([counts.id, trend.id])
      expect(stored.tiles[0]).toMatchObject({ color: null, layouts: {}, deleted: false, error: null, insight: { name: 'Counts on a dashboard', result: null } })

      await refreshed(counts.id) // the events are in the store
      const fresh = await get(`dashboards/${d.id}/?refresh=true`)
      expect(fresh.last_refresh).toMatch(/Z$/)
      const [ok, failing] = fresh.tiles
      expect(ok).toMatchObject({ error: null, is_cached: false, insight: { result: [['$pageview', 3], ['signup', 1]], columns: ['event', 'n'] } })
      expect(failing).toMatchObject({ insight: { id: trend.id, result: null }, error: { type: 'validation_error', code: 'invalid_input', attr: 'query__kind' } })
      // the list of dashboards carries no tiles
      const listed = (await get('dashboards/?limit=1000')).results.find((x: { id: number }) => x.id === d.id)
      expect(listed).toMatchObject({ name: 'Growth', pinned: true })
      expect(listed.tiles).toBeUndefined()

      // colour and layout of a tile, then the tile removed from the dashboard's side
      const tileId = ok.id
      const styled = await json(patch('dashboards', d.id, { tiles: [{ id: tileId, color: 'blue', layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } } }] }))
      expect(styled.tiles.find((t: { id: number }) => t.id === tileId)).toMatchObject({ color: 'blue', layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } } })
      const removed = await json(patch('dashboards', d.id, { tiles: [{ id: tileId, deleted: true }] }))
      expect(removed.tiles.map((t: { insight: { id: number } }) => t.insight.id)).toEqual([trend.id])
      expect((await get(`insights/${counts.id}/`)).dashboards).toEqual([])
      // put back: the same tile, its colour kept
      await patch('insights', counts.id, { dashboards: [d.id] })
      expect((await get(`dashboards/${d.id}/`)).tiles.find((t: { insight: { id: number } }) => t.insight.id === counts.id)).toMatchObject({ id: tileId, color: 'blue' })
      // off again from the insight's side; a deleted insight leaves its dashboards
      await patch('insights', counts.id, { dashboards: [] })
      await patch('insights', trend.id, { deleted: true })
      expect((await get(`dashboards/${d.id}/`)).tiles).toEqual([])

      await refused(patch('insights', counts.id, { dashboards: [99999999] }), 'dashboards', 'does_not_exist')
      await refused(patch('dashboards', d.id, { tiles: [{ id: 99999999, deleted: true }] }), 'tiles__0__id', 'does_not_exist')
      await refused(patch('dashboards', d.id, { tiles: [{ id: tileId, layouts: { x: 'y'.repeat(5000) } }] }), 'tiles__0__layouts', 'max_length')
      // a deleted dashboard: off the list, off its insights' dashboards, still readable; DELETE is 405
      await patch('insights', counts.id, { dashboards: [d.id] })
      expect(await json(patch('dashboards', d.id, { deleted: true }))).toMatchObject({ deleted: true })
      expect((await get('dashboards/?limit=1000')).results.map((x: { id: number }) => x.id)).not.toContain(d.id)
      expect((await get(`insights/${counts.id}/`)).dashboards).toEqual([])
      expect(await get(`dashboards/${d.id}/`)).toMatchObject({ deleted: true })
      expect((await stack.api(`/api/projects/1/dashboards/${d.id}/`, { method: 'DELETE' })).status).toBe(405)
      expect((await stack.api('/api/projects/1/dashboards/99999999/')).status).toBe(404)
    })

    test('a dashboard refresh computes two tiles at a time, carries a failing tile\'s error, and starts none past its time budget', async () => {
      const project = await createProject(sql(), { name: `refresh-${postgres}` })
      const d = await post('dashboards', { name: 'Slow' }, project.id)
      for (let n = 0; n < 8; n++) await post('insights', { name: `slow ${n}`, query: hogql(n === 3 ? 'FAIL' : `SELECT ${n} FROM events`), dashboards: [d.id] }, project.id)
      let running = 0
      let most = 0
      let calls = 0
      // a runner that takes its time, so that overlapping tiles show
      const runner: InsightQueryRunner = {
        async run(_project, query) {
          calls++
          most = Math.max(most, ++running)
          try {
            await Bun.sleep(50)
            const text = (query as { query: string }).query
            if (text === 'FAIL') throw errors.validation('invalid_query', 'This query cannot run.', 'query')
            return { results: [[text]], columns: ['x'] }
          } finally {
            running--
          }
        },
      }
      const insights = new InsightService({ sql: sql(), runner })
      const context = { id: project.id, timezone: 'UTC', weekStartDay: 0 }
      const started = performance.now()
      const answer = await new DashboardService({ sql: sql(), insights, refreshBudgetMs: 30_000 }).retrieve(context, String(d.id), 'force')
      console.log(`[dashboards] ${postgres}: 8 tiles of 50 ms refreshed in ${(performance.now() - started).toFixed(0)} ms, at most ${most} at a time`)
      expect({ calls, most }).toEqual({ calls: 8, most: DASHBOARD_LIMITS.refreshConcurrency })
      expect(answer.tiles.map((t) => t.error?.code ?? t.insight.result)).toEqual([
        [['SELECT 0 FROM events']], [['SELECT 1 FROM events']], [['SELECT 2 FROM events']], 'invalid_query',
        [['SELECT 4 FROM events']], [['SELECT 5 FROM events']], [['SELECT 6 FROM events']], [['SELECT 7 FROM events']],
      ])
      // no time left: no tile starts, each says why and shows its stored result
      calls = 0
      const late = await new DashboardService({ sql: sql(), insights, refreshBudgetMs: 0 }).retrieve(context, String(d.id), 'force')
      expect(calls).toBe(0)
      expect(late.tiles.map((t) => t.error?.code)).toEqual(Array(8).fill('dashboard_refresh_budget'))
      expect(late.tiles[0]).toMatchObject({ is_cached: true, insight: { result: [['SELECT 0 FROM events']] } })
    })

    test('hostile fields: each bound refused with 400 naming its field, nothing written', async () => {
      const before = (await get('insights/?limit=1')).count
      const insight = (body: unknown) => stack.api('/api/projects/1/insights/', { method: 'POST', json: body })
      await refused(insight({ name: 'x'.repeat(401) }), 'name', 'max_length')
      await refused(insight({ derived_name: 'x'.repeat(401) }), 'derived_name', 'max_length')
      await refused(insight({ description: 'x'.repeat(4097) }), 'description', 'max_length')
      await refused(insight({ tags: Array.from({ length: 33 }, (_, n) => `t${n}`) }), 'tags', 'max_length')
      await refused(insight({ tags: ['x'.repeat(65)] }), 'tags', 'max_length')
      await refused(insight({ tags: Array.from({ length: 100_000 }, () => 'same') }), 'tags', 'max_length')
      await refused(insight({ query: hogql(`SELECT '${'x'.repeat(70_000)}' FROM events`) }), 'query', 'max_length')
      let deep: unknown = 1
      for (let n = 0; n < 40; n++) deep = { a: deep }
      await refused(insight({ query: { kind: 'HogQLQuery', query: 'SELECT 1 FROM events', values: deep } }), 'query', 'max_depth')
      await refused(insight({ query: { kind: 'SavedInsightNode', shortId: 'abc' } }), 'query')
      await refused(insight({ query: { kind: 'InsightVizNode' } }), 'query')
      await refused(insight({ query: 'SELECT 1' }), 'query')
      await refused(insight({ filters: { events: [{ id: '$pageview' }] } }), 'filters')
      await refused(insight({ dashboards: Array.from({ length: 1001 }, (_, n) => n + 1) }), 'dashboards', 'max_length')
      await refused(insight({ saved: 'yes' }), 'saved')
      await refused(insight({ name: 'nul\0' }), 'name')
      expect((await get('insights/?limit=1')).count).toBe(before)
      const dashboard = (body: unknown) => stack.api('/api/projects/1/dashboards/', { method: 'POST', json: body })
      await refused(dashboard({ name: 'x'.repeat(401) }), 'name', 'max_length')
      await refused(dashboard({ description: 'x'.repeat(4097) }), 'description', 'max_length')
      await refused(dashboard({ tags: ['x'.repeat(65)] }), 'tags', 'max_length')
      await refused(dashboard({ use_template: 'x' }), 'use_template')
      // odd shapes: always a 4xx, never a 500
      const target = await post('insights', { name: 'target' })
      const dash = await post('dashboards', { name: 'target' })
      const odd: [string, string, string][] = [
        ['POST', '/api/projects/1/insights/', 'null'],
        ['POST', '/api/projects/1/insights/', '[1]'],
        ['POST', '/api/projects/1/insights/', '{"name": '],
        ['PATCH', `/api/projects/1/insights/${target.id}/`, '{"tags": "x"}'],
        ['PATCH', `/api/projects/1/insights/${target.id}/`, '{"dashboards": [1e400]}'],
        ['PATCH', `/api/projects/1/insights/${target.id}/`, '{"query": {"kind": "InsightVizNode", "source": {"kind": "TrendsQuery", "x": "\\u0000"}}}'],
        ['PATCH', `/api/projects/1/insights/${target.id}/`, '{"query": {"kind": "HogQLQuery", "query": "\\ud800"}}'],
        ['PATCH', `/api/projects/1/dashboards/${dash.id}/`, '{"tiles": [null]}'],
        ['PATCH', `/api/projects/1/dashboards/${dash.id}/`, '{"tiles": {"id": 1}}'],
        ['PATCH', `/api/projects/1/dashboards/${dash.id}/`, '{"tiles": [{"id": 99999999999}]}'],
        ['PATCH', `/api/projects/1/dashboards/${dash.id}/`, '{"pinned": "yes"}'],
        ['GET', '/api/projects/1/insights/?dashboards=[1,', ''],
        ['GET', '/api/projects/1/insights/?dashboards=1,,2', ''],
        ['GET', `/api/projects/1/insights/?search=${'x'.repeat(300)}`, ''],
        ['GET', `/api/projects/1/dashboards/${dash.id}/?refresh=later`, ''],
      ]
      for (const [method, path, body] of odd) {
        const r = await stack.api(path, { method, ...(body ? { body, headers: { 'content-type': 'application/json' } } : {}) })
        expect({ method, path, body, status: r.status }).toEqual({ method, path, body, status: 400 })
      }
      for (const id of ['0', '-1', '9999999999', '1.5', 'x']) expect((await stack.api(`/api/projects/1/dashboards/${id}/`)).status).toBe(404)
      const metrics = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
      expect(metrics).toMatch(/insight_writes_refused_total\{field="query"\} [1-9]/)
    })

    test('caps: 100 tiles a dashboard, 10,000 insights and 1,000 dashboards a project (deleted ones do not count)', async () => {
      const project = await createProject(sql(), { name: `caps-${postgres}` })
      const d = await post('dashboards', { name: 'Full' }, project.id)
      for (let n = 0; n < DASHBOARD_LIMITS.tilesPerDashboard; n++) await post('insights', { name: `tile ${n}`, dashboards: [d.id] }, project.id)
      const started = performance.now()
      const full = await json(stack.api(`/api/projects/${project.id}/dashboards/${d.id}/`))
      console.log(`[dashboards] ${postgres}: a dashboard of ${full.tiles.length} tiles read in ${(performance.now() - started).toFixed(0)} ms`)
      expect(full.tiles.length).toBe(DASHBOARD_LIMITS.tilesPerDashboard)
      const over = stack.api(`/api/projects/${project.id}/insights/`, { method: 'POST', json: { name: 'one too many', dashboards: [d.id] } })
      expect(await refused(over, 'dashboards', 'limit_exceeded')).toContain(`${DASHBOARD_LIMITS.tilesPerDashboard} tiles`)

      // the rest of the project's insights and dashboards made in bulk, then the API asked for one more
      const [{ n: insights }] = await sql()<{ n: number }[]>`select count(*)::int as n from insights where team_id = ${project.id}`
      await sql()`insert into insights (team_id, short_id, name) select ${project.id}, 'bulk' || g, 'bulk' from generate_series(1, ${DASHBOARD_LIMITS.insightsPerProject - insights - 1}) g`
      const last = await post('insights', { name: 'the last one' }, project.id)
      const insightCap = stack.api(`/api/projects/${project.id}/insights/`, { method: 'POST', json: { name: 'past the cap' } })
      expect(await refused(insightCap, null, 'limit_exceeded')).toContain('10000 insights')
      // a deleted insight frees its place; bringing it back needs one
      expect((await stack.api(`/api/projects/${project.id}/insights/${last.id}/`, { method: 'PATCH', json: { deleted: true } })).status).toBe(200)
      const again = await post('insights', { name: 'in its place' }, project.id)
      await refused(stack.api(`/api/projects/${project.id}/insights/${last.id}/`, { method: 'PATCH', json: { deleted: false } }), null, 'limit_exceeded')
      expect(again.id).toBeGreaterThan(last.id)

      await sql()`insert into dashboards (team_id, name) select ${project.id}, 'bulk' from generate_series(1, ${DASHBOARD_LIMITS.dashboardsPerProject - 2}) g`
      await post('dashboards', { name: 'the last dashboard' }, project.id)
      await refused(stack.api(`/api/projects/${project.id}/dashboards/`, { method: 'POST', json: { name: 'past the cap' } }), null, 'limit_exceeded')
      const started2 = performance.now()
      const page = await json(stack.api(`/api/projects/${project.id}/insights/?limit=1000&search=bulk`))
      console.log(`[dashboards] ${postgres}: a page of 1,000 of a project's 10,000 insights (searched) in ${(performance.now() - started2).toFixed(0)} ms`)
      expect(page.count).toBe(DASHBOARD_LIMITS.insightsPerProject - DASHBOARD_LIMITS.tilesPerDashboard - 1)
      expect(page.results.length).toBe(1000)
    }, 120_000)

    test('an answer over 1 MiB is answered, not stored; list pages stop at their byte budget and next continues', async () => {
      const project = await createProject(sql(), { name: `big-${postgres}`, token: `phc_big_results_${postgres}` })
      await stack.services.tokens.invalidate()
      const blob = 'x'.repeat(100_000)
      const batch = Array.from({ length: 12 }, (_, n) => ev('big', `p${n}`, { blob }))
      const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: `phc_big_results_${postgres}`, batch }) }))
      expect(r.status).toBe(200)
      await learned(stack)
      const i = await post('insights', { name: 'Large', query: hogql('SELECT properties.blob FROM events') }, project.id)
      let fresh: { result: unknown[] } = { result: [] }
      for (let n = 0; n < 100 && fresh.result.length < 12; n++) {
        fresh = await json(stack.api(`/api/projects/${project.id}/insights/${i.id}/?refresh=true`))
        if (fresh.result.length < 12) await Bun.sleep(100)
      }
      expect(fresh.result.length).toBe(12)
      const stored = await json(stack.api(`/api/projects/${project.id}/insights/${i.id}/`))
      expect(stored).toMatchObject({ result: null, last_refresh: null, is_cached: false })
      const metrics = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
      expect(metrics).toMatch(/insight_refreshes_total\{outcome="too_large_to_store"\} [1-9]/)

      // on a dashboard, the answer too large to store is not carried: the tile says so, the dashboard answers
      const d = await post('dashboards', { name: 'Big' }, project.id)
      await stack.api(`/api/projects/${project.id}/insights/${i.id}/`, { method: 'PATCH', json: { dashboards: [d.id] } })
      const refreshedDashboard = await json(stack.api(`/api/projects/${project.id}/dashboards/${d.id}/?refresh=true`))
      expect(refreshedDashboard.tiles[0]).toMatchObject({ insight: { id: i.id, result: null }, error: { code: 'result_too_large' } })

      // twenty insights with stored answers of 0.9 MiB each, on the dashboard: a list page of 8 MiB holds nine, the
      // dashboard's 16 MiB seventeen (the others say so)
      const answer = JSON.stringify({ results: [['y'.repeat(900 * 1024)]], columns: ['y'] })
      for (let n = 0; n < 20; n++) {
        const made = await post('insights', { name: `stored ${n}`, query: hogql('SELECT 1 FROM events'), dashboards: [d.id] }, project.id)
        await sql()`update insights set result = ${answer}::text::jsonb, result_bytes = ${Buffer.byteLength(answer)}, last_refresh = now() where id = ${made.id}`
      }
      let started = performance.now()
      const dashboardText = await (await stack.api(`/api/projects/${project.id}/dashboards/${d.id}/`)).text()
      const dashboard = JSON.parse(dashboardText)
      console.log(`[dashboards] ${postgres}: dashboard of ${dashboard.tiles.length} tiles, ${(dashboardText.length / 1048576).toFixed(1)} MiB in ${(performance.now() - started).toFixed(0)} ms`)
      const carried = dashboard.tiles.filter((t: { insight: { result: unknown } }) => t.insight.result !== null)
      expect(carried.length).toBe(Math.floor(DASHBOARD_LIMITS.dashboardResultBytes / Buffer.byteLength(answer)))
      expect(dashboard.tiles.filter((t: { error: { code: string } | null }) => t.error?.code === 'dashboard_too_large').length).toBe(20 - carried.length)
      expect(dashboardText.length).toBeLessThan(DASHBOARD_LIMITS.dashboardResultBytes + 1024 * 1024)

      started = performance.now()
      let url: string | null = `/api/projects/${project.id}/insights/?limit=100`
      const ids: number[] = []
      const sizes: number[] = []
      let count = 0
      while (url) {
        const text = await (await stack.api(url.replace(BASE, ''))).text()
        const page = JSON.parse(text)
        count = page.count
        sizes.push(page.results.length)
        expect(text.length).toBeLessThan(9 * 1024 * 1024)
        ids.push(...page.results.map((x: { id: number }) => x.id))
        url = page.next
      }
      console.log(`[dashboards] ${postgres}: ${count} insights listed in pages of ${sizes.join(', ')} (8 MiB each at most) in ${(performance.now() - started).toFixed(0)} ms`)
      expect(sizes.length).toBeGreaterThan(2)
      expect(ids.length).toBe(count)
      expect(new Set(ids).size).toBe(count)
      const metricsAfter = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
      expect(metricsAfter).toMatch(/list_pages_cut_total\{list="insights"\} [1-9]/)
    }, 120_000)

    test('another project: its path answers 404 for these ids, a key limited to one project gets 403 elsewhere', async () => {
      const mine = await post('insights', { name: 'mine' })
      const dash = await post('dashboards', { name: 'mine' })
      const second = await createProject(sql(), { name: `second-${postgres}` })
      expect((await stack.api(`/api/projects/${second.id}/insights/${mine.id}/`)).status).toBe(404)
      expect((await stack.api(`/api/projects/${second.id}/dashboards/${dash.id}/`)).status).toBe(404)
      expect((await stack.api(`/api/projects/${second.id}/insights/${mine.id}/`, { method: 'PATCH', json: { name: 'taken' } })).status).toBe(404)
      const theirs = await post('dashboards', { name: 'theirs' }, second.id)
      await refused(patch('insights', mine.id, { dashboards: [theirs.id] }), 'dashboards', 'does_not_exist')
      expect((await get(`insights/?short_id=${mine.short_id}`)).count).toBe(1)
      expect((await json(stack.api(`/api/projects/${second.id}/insights/?short_id=${mine.short_id}`))).count).toBe(0)
      const user = await createUser(sql(), { email: `dash-${crypto.randomUUID().slice(0, 8)}@example.com` })
      const key = (await createPersonalKeyFor(sql(), user.id, { label: 'second only', scopes: ['insight:read', 'dashboard:read'], scoped_teams: [second.id] })).value!
      const call = (path: string) => stack.api(path, { headers: { authorization: `Bearer ${key}` } })
      expect((await call(`/api/projects/1/insights/${mine.id}/`)).status).toBe(403)
      expect((await call(`/api/projects/1/dashboards/`)).status).toBe(403)
      expect((await call(`/api/projects/${second.id}/dashboards/`)).status).toBe(200)
      expect((await stack.api(`/api/projects/${second.id}/insights/`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, json: { name: 'read-only key' } })).status).toBe(403)
    })
  })
}
