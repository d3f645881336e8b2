// FunnelsQuery through POST /api/projects/:id/query/ on every store (insight-funnels.*.test.ts): ordered, strict and
// unordered counts, the window, exclusions, conversion times, a first-touch breakdown with "Other", the trends view
// in a New York project, time_to_convert, a person merged mid-funnel, paging through more rows than one answer
// holds (one person's events over several pages), the events cap and refused questions.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

/** The cap the stacks of these tests run with (INSIGHTS_FUNNEL_MAX_EVENTS). */
export const FUNNEL_MAX_EVENTS = 2000
const NY_KEY = 'phc_funnels_new_york_0001'
const BULK_KEY = 'phc_funnels_bulk_00000001'
const DAY = Date.UTC(2024, 4, 6)
const at = (hours: number) => new Date(DAY + hours * 3_600_000).toISOString()
const ev = (event: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({ event, timestamp, properties: { distinct_id: distinctId, ...properties } })

// u1 converts with another event between view and purchase; u2 purchases before viewing; u3 purchases after the
// 14-day window; u4 converts in a row; u5 cancels between signup and view; anon-6 signs up, becomes user-6, views.
const EVENTS = [
  ev('signup', 'u1', at(1), { $browser: 'Chrome' }), ev('view', 'u1', at(2)), ev('other', 'u1', at(2.5)), ev('purchase', 'u1', at(3)),
  ev('signup', 'u2', at(1), { $browser: 'Firefox' }), ev('purchase', 'u2', at(2)), ev('view', 'u2', at(3)),
  ev('signup', 'u3', at(1), { $browser: 'Chrome' }), ev('view', 'u3', at(1.5)), ev('purchase', 'u3', at(20 * 24)),
  ev('signup', 'u4', at(1), { $browser: 'Safari' }), ev('view', 'u4', at(2)), ev('purchase', 'u4', at(3)),
  ev('signup', 'u5', at(1), { $browser: 'Chrome' }), ev('cancel', 'u5', at(1.5)), ev('view', 'u5', at(2)), ev('purchase', 'u5', at(3)),
  ev('signup', 'anon-6', at(1)), ev('$identify', 'user-6', at(1.2), { $anon_distinct_id: 'anon-6' }), ev('view', 'user-6', at(2)),
]
const PERSONS = 6
// New York: one signup on the evening of 5 May local time (converts), one after midnight on the 6th (does not)
const NY_EVENTS = [ev('signup', 'ny1', at(3)), ev('view', 'ny1', at(4)), ev('purchase', 'ny1', at(5)), ev('signup', 'ny2', at(5))]
// bulk: persons that reach 3, 2 or 1 steps, one person whose 600 signups span pages, and noise a strict funnel reads
const BULK_PERSONS = 300
const HEAVY_SIGNUPS = 600
const NOISE = 1000
function bulkEvents() {
  const out = []
  for (let i = 0; i < BULK_PERSONS; i++) {
    const steps = ['signup', 'view', 'purchase'].slice(0, 3 - (i % 3))
    steps.forEach((name, k) => out.push(ev(name, `bulk-${i}`, at(1 + k + i / 1000))))
  }
  for (let i = 0; i < HEAVY_SIGNUPS; i++) out.push(ev('signup', 'heavy', new Date(DAY + i * 1000).toISOString()))
  out.push(ev('view', 'heavy', at(1)), ev('purchase', 'heavy', at(2)))
  for (let i = 0; i < NOISE; i++) out.push(ev('noise', `noise-${i % 10}`, at(3 + i / 1000)))
  return out
}

const STEPS = [{ kind: 'EventsNode', event: 'signup' }, { kind: 'EventsNode', event: 'view' }, { kind: 'EventsNode', event: 'purchase' }]
const RANGE = { date_from: '2024-05-01', date_to: '2024-05-31' }

export function insightFunnelsContract(name: string, start: () => Promise<Stack>): void {
  describe(`funnels: ${name}`, () => {
    let stack: Stack
    let ny: number
    let bulk: number
    const ask = (query: Record<string, unknown>, project: number = 1) =>
      stack.api(`/api/projects/${project}/query/`, { method: 'POST', json: { query: { kind: 'FunnelsQuery', series: STEPS, dateRange: RANGE, ...query }, refresh: 'force_blocking' } })
    const results = async (query: Record<string, unknown>, project = 1) => {
      const r = await ask(query, project)
      const body = await json(r)
      if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`)
      return body.results
    }
    const counts = async (funnelsFilter: Record<string, unknown>, project = 1) => ((await results({ funnelsFilter }, project)) as { count: number }[]).map((s) => s.count)
    const persons = async (project: number) => {
      const r = await stack.api(`/api/projects/${project}/query/`, { method: 'POST', json: { query: { kind: 'HogQLQuery', query: 'SELECT count(DISTINCT person_id), count() FROM events' } } })
      return ((await json(r)).results as number[][])[0]
    }

    beforeAll(async () => {
      stack = await start()
      ny = (await createProject(stack.services.db.sql, { name: 'New York', token: NY_KEY })).id
      bulk = (await createProject(stack.services.db.sql, { name: 'Bulk', token: BULK_KEY })).id
      await stack.services.tokens.invalidate()
      const patched = await stack.api(`/api/projects/${ny}/`, { method: 'PATCH', json: { timezone: 'America/New_York' } })
      expect(patched.status).toBe(200)
      const all = bulkEvents()
      const batches: [string, unknown[]][] = [[PROJECT_KEY, EVENTS], [NY_KEY, NY_EVENTS]]
      for (let i = 0; i < all.length; i += 500) batches.push([BULK_KEY, all.slice(i, i + 500)])
      for (const [key, batch] of batches) {
        const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: key, batch }) }))
        expect(r.status).toBe(200)
      }
      await learned(stack)
      // the person mapping is copied from Postgres every half second
      for (let i = 0; i < 300; i++) {
        const [[one], [two], [three]] = [await persons(1), await persons(ny), await persons(bulk)]
        if (one === PERSONS && two === 2 && three === BULK_PERSONS + 1 + 10) break
        await Bun.sleep(100)
      }
    }, 180_000)
    afterAll(async () => stack?.close())

    test('ordered: persons per step, the window from the first step, a merged person counted once, times from the step before', async () => {
      const steps = await results({})
      expect(steps.map((s: { count: number }) => s.count)).toEqual([6, 6, 3])
      expect(steps[0]).toMatchObject({ action_id: 'signup', name: 'signup', order: 0, type: 'events', people: [], average_conversion_time: null, median_conversion_time: null })
      // signup → view: 1 h, 2 h, 30 min, 1 h, 1 h, 1 h
      expect(steps[1]).toMatchObject({ order: 1, average_conversion_time: 3900, median_conversion_time: 3600 })
      expect(steps[2]).toMatchObject({ order: 2, average_conversion_time: 3600, median_conversion_time: 3600 })
      // a window of 20 days takes in u3's purchase; one of 30 minutes keeps only u3's view
      expect(await counts({ funnelWindowInterval: 20, funnelWindowIntervalUnit: 'day' })).toEqual([6, 6, 4])
      expect(await counts({ funnelWindowInterval: 30, funnelWindowIntervalUnit: 'minute' })).toEqual([6, 1, 0])
    })

    test('strict breaks on any other event; unordered takes the steps in any order', async () => {
      expect(await counts({ funnelOrderType: 'strict' })).toEqual([6, 3, 1])
      expect(await counts({ funnelOrderType: 'unordered' })).toEqual([6, 6, 4])
    })

    test('an exclusion between two steps voids the attempt', async () => {
      const exclusions = [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 1 }]
      expect(await counts({ exclusions })).toEqual([5, 5, 2])
      // a cancel outside its steps (after view) changes nothing
      expect(await counts({ exclusions: [{ ...exclusions[0], funnelFromStep: 1, funnelToStep: 2 }] })).toEqual([6, 6, 3])
    })

    test('breakdown: the value on the first step, the most entered first, the rest as "Other"', async () => {
      const lists = (await results({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 2 } })) as { breakdown_value: string; count: number }[][]
      expect(lists.map((steps) => [steps[0].breakdown_value, ...steps.map((s) => s.count)])).toEqual([
        ['Chrome', 3, 3, 2],
        ['$$_posthog_breakdown_null_$$', 1, 1, 0],
        ['Other', 2, 2, 1],
      ])
    })

    test('time_to_convert: a histogram of seconds between the chosen steps', async () => {
      const answer = await results({ funnelsFilter: { funnelVizType: 'time_to_convert', funnelFromStep: 0, funnelToStep: 1 } })
      expect(answer).toEqual({ bins: [[1800, 5], [4500, 0], [7200, 1]], average_conversion_time: 3900 })
    })

    test('trends: conversion per day of the first step, in the project timezone', async () => {
      const [utc] = await results({ funnelsFilter: { funnelVizType: 'trends' }, dateRange: { date_from: '2024-05-04', date_to: '2024-05-07' } })
      expect(utc).toMatchObject({ count: 4, days: ['2024-05-04', '2024-05-05', '2024-05-06', '2024-05-07'], data: [0, 0, 50, 0] })
      const r = await ask({ funnelsFilter: { funnelVizType: 'trends' }, dateRange: { date_from: '2024-05-04', date_to: '2024-05-07' } }, ny)
      const body = await json(r)
      expect(body.timezone).toBe('America/New_York')
      expect(body.results[0]).toMatchObject({ days: ['2024-05-04', '2024-05-05', '2024-05-06', '2024-05-07'], data: [0, 100, 0, 0], labels: ['4-May-2024', '5-May-2024', '6-May-2024', '7-May-2024'] })
    })

    test('more rows than one answer holds: paged by person and time, one person over several pages', async () => {
      const started = performance.now()
      const expected = [BULK_PERSONS + 1, (BULK_PERSONS * 2) / 3 + 1, BULK_PERSONS / 3 + 1]
      const r = await ask({}, bulk)
      const body = await json(r)
      expect(body.results.map((s: { count: number }) => s.count)).toEqual(expected)
      // pages of at most QUERY_MAX_RESULT_BYTES (64 KiB here), each a statement of its own
      const pages = (body.hogql as string).split(';\n\n').length
      expect(pages).toBeGreaterThan(2)
      expect(await counts({ funnelOrderType: 'unordered' }, bulk)).toEqual(expected)
      console.log(`${name}: ${BULK_PERSONS * 2 + HEAVY_SIGNUPS + 2} step events in ${pages} pages, two funnels in ${(performance.now() - started).toFixed(0)} ms`)
    }, 60_000)

    test(`past INSIGHTS_FUNNEL_MAX_EVENTS (${FUNNEL_MAX_EVENTS}) a funnel is refused by name, not cut`, async () => {
      // a strict funnel reads every event of the range: the noise too
      const r = await ask({ funnelsFilter: { funnelOrderType: 'strict' } }, bulk)
      expect(r.status).toBe(400)
      expect(await json(r)).toMatchObject({ type: 'validation_error', code: 'too_many_events', attr: 'query__dateRange' })
      const metrics = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
      expect(metrics).toMatch(/insight_funnel_events_total\{outcome="refused"\} [1-9]/)
      expect(metrics).toMatch(/insight_funnel_events_total\{outcome="read"\} [1-9]/)
    })

    test('refused questions: a 400 naming the member', async () => {
      const refused = async (query: Record<string, unknown>, attr: string) => {
        const r = await ask(query)
        expect(r.status).toBe(400)
        expect(await json(r)).toMatchObject({ type: 'validation_error', attr })
      }
      await refused({ funnelsFilter: { exclusions: [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 1, funnelToStep: 1 }] } }, 'query__funnelsFilter__exclusions__0')
      await refused({ funnelsFilter: { exclusions: [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 3 }] } }, 'query__funnelsFilter__exclusions__0')
      await refused({ funnelsFilter: { funnelVizType: 'trends', funnelFromStep: 2, funnelToStep: 1 } }, 'query__funnelsFilter__funnelToStep')
      await refused({ funnelsFilter: { breakdownAttributionType: 'step' } }, 'query__funnelsFilter__breakdownAttributionType')
      await refused({ series: [STEPS[0]] }, 'query__series')
      await refused({ series: Array.from({ length: 21 }, () => STEPS[0]) }, 'query__series')
      // a member of an optional object: the checker names the object
      await refused({ funnelsFilter: { funnelWindowIntervalUnit: 'fortnight' } }, 'query__funnelsFilter')
      // 20 steps is allowed: u1..u5 have 1 signup, so everyone stops at step 0
      expect(((await results({ series: Array.from({ length: 20 }, () => STEPS[0]) })) as { count: number }[]).map((s) => s.count)).toEqual([6, ...new Array(19).fill(0)])
    })
  })
}
