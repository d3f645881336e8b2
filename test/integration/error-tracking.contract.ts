// Error tracking on every store (error-tracking.*.test.ts): `$exception` events sent through capture are fingerprinted
// by the flush worker, grouped into issues in Postgres and counted from the store. The same error twice is one issue
// with two occurrences, another stack a second issue; a resolved issue that recurs is active again; a suppressed one
// is counted, not listed; merge and split move past events; another project's issues are never touched; 10,000
// distinct fingerprints from one token are capped (the events kept).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { BASE, json, PROJECT_KEY, type Stack } from '../helpers/stack'

const frame = (fn: string, line: number, inApp = true) => ({ platform: 'web:javascript', filename: `https://app.example.com/assets/${fn}.js`, function: fn, lineno: line, colno: 7, in_app: inApp })

export function exception(distinctId: string, type: string, message: string, frames: unknown[], extra: Record<string, unknown> = {}) {
  return {
    event: '$exception',
    timestamp: new Date().toISOString(),
    properties: {
      distinct_id: distinctId,
      $session_id: `s-${distinctId}`,
      $exception_list: [{ type, value: message, mechanism: { type: 'generic', handled: true, synthetic: false }, stacktrace: { type: 'raw', frames } }],
      $set: { exception_should_not_set: true },
      ...extra,
    },
  }
}

/** Every consumer of the log (the issues' one included) has finished what was captured. */
export async function settled(stack: Stack, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const stats = stack.services.captureLog.stats()
    if (Object.values(stats.consumers).every((c) => c.position === stats.lastSeq)) break
    await Bun.sleep(25)
  }
  // and every exception's distinct id has its person where the events are (copied every half second): users count them
  while (Date.now() < deadline) {
    const answer = await stack.services.query.run(1, `SELECT count() FROM events WHERE event = '$exception' AND person_id IS NULL`)
    if (Number(answer.results[0]![0]) === 0) return
    await Bun.sleep(100)
  }
  throw new Error(`not settled in time: ${JSON.stringify(stack.services.captureLog.stats())}`)
}

export async function send(stack: Stack, events: unknown[], token = PROJECT_KEY): Promise<void> {
  for (let i = 0; i < events.length; i += 1000) {
    const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: token, batch: events.slice(i, i + 1000) }) }))
    expect(r.status).toBe(200)
  }
}

export function errorTrackingContract(name: string, start: () => Promise<Stack>) {
  describe(`error tracking: ${name}`, () => {
    let stack: Stack
    const api = (path: string, method = 'GET', body?: unknown) => stack.api(`/api/projects/1/error_tracking/issues${path}`, { method, ...(body === undefined ? {} : { json: body }) })
    const list = async (query = '') => json(api(`/${query}`))
    const byName = async (description: string, query = '') => ((await list(query)).results as any[]).find((i) => i.description === description)
    const metricsText = async () => (await stack.app.handle(new Request(`${BASE}/metrics`))).text()

    beforeAll(async () => {
      stack = await start()
    })
    afterAll(async () => {
      await stack?.close()
    })

    test('the same error twice is one issue with two occurrences; another stack is a second issue', async () => {
      await send(stack, [
        exception('u1', 'TypeError', 'x is undefined', [frame('vendor', 1, false), frame('onClick', 10)]),
        exception('u2', 'TypeError', 'x is undefined', [frame('vendor2', 1, false), frame('onClick', 10)]),
        exception('u1', 'TypeError', 'x is undefined', [frame('onSubmit', 20)]),
      ])
      await settled(stack)
      const page = await list()
      expect(page.count).toBe(2)
      const click = page.results.find((i: any) => i.aggregations.occurrences === 2)
      expect(click).toMatchObject({ name: 'TypeError', description: 'x is undefined', status: 'active', aggregations: { occurrences: 2, users: 2, sessions: 2 } })
      expect(click.aggregations.volumeRange.reduce((a: number, b: number) => a + b, 0)).toBe(2)
      expect(page.results.filter((i: any) => i.aggregations.occurrences === 1)).toHaveLength(1)
      // the stored events carry the fingerprint and the issue; one issue's events with its stack
      const one = await json(api(`/${click.id}/`))
      expect(one.events).toHaveLength(2)
      for (const e of one.events) {
        expect(e.properties.$exception_issue_id).toBe(click.id)
        expect(e.properties.$exception_fingerprint).toBe(one.fingerprints[0])
        expect(e.properties.$exception_list[0].stacktrace.frames).toHaveLength(2)
        expect(e.properties.$exception_types).toEqual(['TypeError'])
      }
      // $exception events do not set person properties (PostHog's rule)
      const people = await stack.services.db.sql`select properties from persons where team_id = 1`
      for (const p of people) expect(p.properties.exception_should_not_set).toBeUndefined()
    })

    test('a resolved issue that recurs is active again; a suppressed one is counted, not listed', async () => {
      await send(stack, [exception('u3', 'Error', 'resolve me', [frame('a', 1)]), exception('u3', 'Error', 'suppress me', [frame('b', 1)])])
      await settled(stack)
      const resolved = await byName('resolve me')
      const suppressed = await byName('suppress me')
      expect((await json(api(`/${resolved.id}/`, 'PATCH', { status: 'resolved' }))).status).toBe('resolved')
      expect((await json(api(`/${suppressed.id}/`, 'PATCH', { status: 'suppressed', assignee: { type: 'user', id: 1 } }))).assignee).toEqual({ type: 'user', id: 1 })
      expect((await byName('resolve me')).status).toBe('resolved')
      expect(await byName('suppress me')).toBeUndefined()
      await send(stack, [exception('u4', 'Error', 'resolve me', [frame('a', 1)]), exception('u4', 'Error', 'suppress me', [frame('b', 1)])])
      await settled(stack)
      expect(await byName('resolve me')).toMatchObject({ id: resolved.id, status: 'active', aggregations: { occurrences: 2, users: 2 } })
      expect(await byName('suppress me')).toBeUndefined()
      expect(await byName('suppress me', '?status=suppressed')).toMatchObject({ id: suppressed.id, status: 'suppressed', aggregations: { occurrences: 2 } })
      expect((await json(api(`/${suppressed.id}/`, 'PATCH', { status: 'closed' }))).attr).toBe('status')
    })

    test('merge moves the other issues and their past events here; split gives a fingerprint its own issue again', async () => {
      await send(stack, [exception('u5', 'Error', 'merge target', [frame('m', 1)]), exception('u6', 'Error', 'merge other', [frame('n', 1)]), exception('u6', 'Error', 'merge other', [frame('n', 1)])])
      await settled(stack)
      const target = await byName('merge target')
      const other = await byName('merge other')
      const merged = await json(api(`/${target.id}/merge/`, 'POST', { ids: [other.id, crypto.randomUUID()] }))
      expect(merged).toEqual({ success: true, merged: [other.id] })
      expect((await api(`/${other.id}/`)).status).toBe(404)
      expect(await byName('merge target')).toMatchObject({ id: target.id, aggregations: { occurrences: 3, users: 2, sessions: 2 } })
      // a new event of the merged fingerprint counts here too (and, once the worker has read the move, carries this issue)
      await Bun.sleep(2500)
      await send(stack, [exception('u7', 'Error', 'merge other', [frame('n', 1)])])
      await settled(stack)
      const detail = await json(api(`/${target.id}/`))
      expect(detail.aggregations.occurrences).toBe(4)
      expect(detail.fingerprints).toHaveLength(2)
      expect(detail.events[0].properties.$exception_issue_id).toBe(target.id)
      // split the merged fingerprint off again: its three events go with it
      const otherFingerprint = detail.events[0].properties.$exception_fingerprint
      const split = await json(api(`/${target.id}/split/`, 'POST', { fingerprints: [otherFingerprint] }))
      expect(split.new_issue_ids).toHaveLength(1)
      expect((await json(api(`/${split.new_issue_ids[0]}/`))).aggregations.occurrences).toBe(3)
      expect((await json(api(`/${target.id}/`))).aggregations.occurrences).toBe(1)
      // refusals
      expect((await api(`/${target.id}/merge/`, 'POST', { ids: 'x' })).status).toBe(400)
      expect((await api(`/${target.id}/merge/`, 'POST', { ids: Array.from({ length: 101 }, () => crypto.randomUUID()) })).status).toBe(400)
      expect((await api(`/not-a-uuid/`)).status).toBe(404)
    })

    test("another project's issues are neither listed nor merged nor changed", async () => {
      const sql = stack.services.db.sql
      const other = await createProject(sql, { name: 'other errors' })
      stack.services.tokens.add(other.api_token, other.id)
      await send(stack, [exception('x1', 'Error', 'theirs', [frame('t', 1)])], other.api_token)
      await settled(stack)
      const [theirs] = await sql`select id from error_tracking_issues where team_id = ${other.id}`
      expect(theirs).toBeDefined()
      expect(await byName('theirs')).toBeUndefined()
      const mine = await byName('merge target')
      expect(await json(api(`/${mine.id}/merge/`, 'POST', { ids: [theirs!.id] }))).toEqual({ success: true, merged: [] })
      expect((await api(`/${theirs!.id}/`, 'PATCH', { status: 'resolved' })).status).toBe(404)
      expect((await api(`/${theirs!.id}/merge/`, 'POST', { ids: [mine.id] })).status).toBe(404)
      const [still] = await sql`select status, team_id from error_tracking_issues where id = ${theirs!.id}`
      expect(still).toMatchObject({ status: 'active', team_id: other.id })
    })

    test('hostile exceptions: stacks near the 1 MiB event cap (5 MB refused at capture), a fingerprint Postgres cannot store, quotes in it, nothing usable at all', async () => {
      // an event over 1 MiB is refused whole at capture (PostHog's rule): a 5 MB stack never reaches the flush worker
      const fiveMegabytes = exception('h0', 'StackError', 'too big', Array.from({ length: 50_000 }, (_, i) => frame(`deep${i}`, i)))
      const refused = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: [fiveMegabytes] }) }))
      expect(refused.status).toBe(413)
      const huge = Array.from({ length: 5_000 }, (_, i) => frame(`deep${i}`, i))
      await send(stack, [
        exception('h1', 'StackError', 'near the cap', huge),
        { event: '$exception', properties: { distinct_id: 'h2', $exception_type: 'FlatError', $exception_message: 'flat near the cap', $exception_stack_trace_raw: '    at f (https://a/x.js:1:2)\n'.repeat(30_000) } },
        exception('h3', 'Error', 'nul fingerprint', [frame('h', 1)], { $exception_fingerprint: 'a\u0000b' }),
        exception('h4', 'Error', 'quoted fingerprint', [frame('h', 1)], { $exception_fingerprint: "x') OR 1=1 --" }),
        exception('h6', 'Error', 'backslash fingerprint', [frame('h', 1)], { $exception_fingerprint: 'C:\\app\\"x"' }),
        { event: '$exception', properties: { distinct_id: 'h5', $exception_list: 'not a list' } },
      ])
      await settled(stack)
      const deep = await byName('near the cap')
      expect(deep).toMatchObject({ name: 'StackError', aggregations: { occurrences: 1 } })
      const stored = (await json(api(`/${deep.id}/?events_limit=1`))).events[0].properties
      expect(stored.$exception_list[0].stacktrace.frames).toHaveLength(5_000) // kept as sent
      expect(stored.$exception_functions.length).toBeLessThanOrEqual(64) // derived properties bounded
      expect(await byName('flat near the cap')).toMatchObject({ name: 'FlatError', aggregations: { occurrences: 1 } })
      const nul = await byName('nul fingerprint')
      expect((await json(api(`/${nul.id}/`))).fingerprints[0]).toMatch(/^[0-9a-f]{128}$/)
      const quoted = await byName('quoted fingerprint')
      expect(quoted.aggregations.occurrences).toBe(1)
      expect((await json(api(`/${quoted.id}/`))).fingerprints).toEqual(["x') OR 1=1 --"])
      // a backslash or a double quote is not read back alike by every store from JSON: hashed, so listed everywhere
      expect((await json(api(`/${(await byName('backslash fingerprint')).id}/`))).fingerprints[0]).toMatch(/^[0-9a-f]{128}$/)
      expect(await byName('')).toMatchObject({ name: 'Error' })
      // nothing was dead-lettered by the issues' consumer
      expect(await metricsText()).not.toMatch(/pipeline_(dead_lettered_events|flush_failures)_total\{consumer="errors"/)
    })

    test('a merge racing ingestion: every event ends in the merged issue, the merged one never comes back', async () => {
      await send(stack, [exception('r1', 'Error', 'race into', [frame('r', 1)]), exception('r2', 'Error', 'race from', [frame('q', 1)])])
      await settled(stack)
      const into = await byName('race into')
      const from = await byName('race from')
      const batches = Array.from({ length: 20 }, (_, i) => [exception(`r${i}`, 'Error', 'race into', [frame('r', 1)]), exception(`r${i}`, 'Error', 'race from', [frame('q', 1)])])
      const ingest = (async () => {
        for (const b of batches) {
          await send(stack, b)
          await Bun.sleep(5)
        }
      })()
      await Bun.sleep(30)
      const merged = await json(api(`/${into.id}/merge/`, 'POST', { ids: [from.id] }))
      await ingest
      expect(merged.merged).toEqual([from.id])
      await settled(stack)
      expect((await api(`/${from.id}/`)).status).toBe(404)
      const [{ n }] = await stack.services.db.sql`select count(*)::int as n from error_tracking_issues where id = ${from.id}`
      expect(n).toBe(0)
      expect((await json(api(`/${into.id}/`))).aggregations.occurrences).toBe(42)
    })

    test("exception autocapture follows the project's autocapture_exceptions_opt_in (remote config, /flags)", async () => {
      const remote = async () => json(stack.app.handle(new Request(`${BASE}/array/${PROJECT_KEY}/config`)))
      const flags = async () =>
        json(stack.app.handle(new Request(`${BASE}/flags/?v=2&config=true`, { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: 'u1' }) })))
      expect((await json(stack.api('/api/projects/1/'))).autocapture_exceptions_opt_in).toBeNull()
      expect((await remote()).autocaptureExceptions).toBe(false)
      const patched = await stack.api('/api/projects/1/', { method: 'PATCH', json: { autocapture_exceptions_opt_in: true } })
      expect(patched.status).toBe(200)
      expect((await json(patched)).autocapture_exceptions_opt_in).toBe(true)
      const deadline = Date.now() + 10_000
      while ((await remote()).autocaptureExceptions !== true && Date.now() < deadline) await Bun.sleep(100)
      expect(await remote()).toMatchObject({ autocaptureExceptions: true, errorTracking: { autocaptureExceptions: true } })
      expect(await flags()).toMatchObject({ autocaptureExceptions: true })
      expect((await stack.api('/api/projects/1/', { method: 'PATCH', json: { autocapture_exceptions_opt_in: 'yes' } })).status).toBe(400)
      await stack.api('/api/projects/1/', { method: 'PATCH', json: { autocapture_exceptions_opt_in: false } })
    })

    test('10,000 distinct fingerprints from one token: issues capped, every event kept and fingerprinted', async () => {
      const cap = stack.config.ERROR_TRACKING_MAX_ISSUES
      const before = Number((await stack.services.db.sql`select count(*)::int as n from error_tracking_issues where team_id = 1`)[0]!.n)
      const flood = Array.from({ length: 10_000 }, (_, i) => exception(`f${i % 50}`, 'FloodError', `flood ${i}`, [frame('flood', i)]))
      await send(stack, flood)
      await settled(stack, 300_000)
      const [{ n }] = await stack.services.db.sql`select count(*)::int as n from error_tracking_issues where team_id = 1`
      expect(n).toBe(cap)
      const counted = await stack.services.query.run(1, `SELECT count(), count(DISTINCT properties.$exception_fingerprint) FROM events WHERE event = '$exception' AND distinct_id LIKE 'f%'`)
      expect(counted.results[0]).toEqual([10_000, 10_000])
      // the flush worker's counters reach the registry in its next message, which may follow the position settled() saw
      const refused = `error_tracking_issues_total{outcome="refused_max_issues"} ${10_000 - (cap - before)}`
      const metricsDeadline = Date.now() + 10_000
      while (!(await metricsText()).includes(refused) && Date.now() < metricsDeadline) await Bun.sleep(100)
      expect(await metricsText()).toContain(refused)
      // the list answers within its bounds
      const page = await list('?order_by=occurrences&limit=5&status=all')
      expect(page.results).toHaveLength(5)
      expect(page.count).toBe(cap)
    })
  })
}
