// Experiments on every store (experiments.*.test.ts): the REST API and its flag, then exposures and metrics counted
// from events sent through capture (persons made and merged by the real pipeline), and the statistics on seeded
// data sets: 10 % vs 30 % of 120 each is significant, 20 vs 20 has too few exposures, an A/A test is not. The store's
// per-variant counts equal the per-person computation of before; past the caps the results are a uniform sample of
// persons; a flood of exposures from the public token is counted (not refused) and named in the answer.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sampleOf, type Window } from '../../src/experiments/counting'
import { countVariants, resultsAnswer } from '../../src/experiments/results'
import { ExperimentsService, type ExperimentsServiceOptions } from '../../src/experiments/service'
import type { Metric } from '../../src/experiments/validation'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'
import { perPersonCounts } from './experiments-per-person'

const HOUR = 3_600_000
// whole seconds, a day ago: inside this month's partition unless the month just began (the history writer copes)
const T0 = Math.floor((Date.now() - 24 * HOUR) / 1000) * 1000
const at = (ms: number) => new Date(T0 + ms).toISOString()

type Event = { event: string; timestamp: string; properties: Record<string, unknown> }
const ev = (event: string, distinctId: string, ms: number, properties: Record<string, unknown> = {}): Event => ({ event, timestamp: at(ms), properties: { distinct_id: distinctId, ...properties } })
const exposure = (flag: string, distinctId: string, ms: number, variant: string) => ev('$feature_flag_called', distinctId, ms, { $feature_flag: flag, $feature_flag_response: variant })

/** `n` persons per variant exposed to `flag`, the first `converted[i]` of variant i doing `goal` after exposure. */
function population(flag: string, n: number, converted: number[], goal: string): Event[] {
  const out: Event[] = []
  ;['control', 'test'].forEach((variant, v) => {
    for (let i = 0; i < n; i++) {
      const id = `${flag}-${variant}-${i}`
      out.push(exposure(flag, id, 1000 + i, variant))
      if (i < converted[v]!) out.push(ev(goal, id, 60_000 + i))
    }
  })
  return out
}

// exposure semantics on flag `exp-a` (metric: purchases within an hour of exposure)
const SEMANTICS: Event[] = [
  exposure('exp-a', 'p1', 0, 'control'),
  exposure('exp-a', 'p1', 5000, 'control'), // counted once
  ev('purchase', 'p1', 10_000, { price: 10 }),
  exposure('exp-a', 'p2', 0, 'control'),
  exposure('exp-a', 'p2', 1000, 'test'), // seen in two variants: $multiple
  ev('purchase', 'p2', 10_000, { price: '1' }),
  ev('purchase', 'p3', -60_000), // before the exposure: not counted
  exposure('exp-a', 'p3', 0, 'test'),
  ev('purchase', 'p3', 20_000, { price: 20 }),
  exposure('exp-a', 'p4', 0, 'test'),
  ev('purchase', 'p4', 2 * HOUR, { price: 1000 }), // past the conversion window
  exposure('exp-a', 'anon-5', 0, 'test'),
  ev('$identify', 'user-5', 30_000, { $anon_distinct_id: 'anon-5' }),
  exposure('exp-a', 'user-5', 40_000, 'test'), // the same person (merged): counted once
  ev('purchase', 'user-5', 50_000, { price: 5.5 }),
  exposure('other-flag', 'p6', 0, 'test'), // another flag
  exposure('exp-a', 'p7', 0, 'false'), // not a variant of the experiment
]

/** A seeded generator (mulberry32): the same "random" data set on every store and every run. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const EQ_VARIANTS = ['control', 'test', 'third']

/**
 * Flag `exp-eq`: 90 persons, most exposed (some twice, some in two variants, one at the same instant in two),
 * some identified later under a second distinct id that is exposed again, and metric events (`eq-view`,
 * `eq-buy` with a price as a number, as text or not a number) before and after the exposure, some before the
 * experiment began.
 */
function equalitySet(): Event[] {
  const rand = seeded(44)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!
  const events: Event[] = [exposure('exp-eq', 'eq-tie', 600_000, 'test'), exposure('exp-eq', 'eq-tie', 600_000, 'control'), ev('eq-view', 'eq-tie', 700_000)]
  for (let i = 0; i < 90; i++) {
    let id = `eq-${i}`
    const exposed = rand() < 0.85
    const variant = pick(EQ_VARIANTS)
    const first = Math.floor(rand() * 2 * HOUR)
    if (exposed) {
      events.push(exposure('exp-eq', id, first, variant))
      if (rand() < 0.4) events.push(exposure('exp-eq', id, first + Math.floor(rand() * HOUR), rand() < 0.3 ? pick(EQ_VARIANTS) : variant))
    }
    if (rand() < 0.1) {
      const user = `eq-user-${i}`
      events.push(ev('$identify', user, first + 1000, { $anon_distinct_id: id }))
      id = user
      if (exposed) events.push(exposure('exp-eq', id, first + 2000, variant))
    }
    for (let k = Math.floor(rand() * 6); k > 0; k--) {
      const at = first + Math.floor((rand() * 5 - 1.5) * HOUR)
      const name = rand() < 0.5 ? 'eq-view' : 'eq-buy'
      const price = rand() < 0.7 ? Math.round(rand() * 10_000) / 100 : rand() < 0.5 ? String(Math.round(rand() * 100)) : 'n/a'
      events.push(ev(name, id, at, name === 'eq-buy' ? { price } : {}))
    }
  }
  return events
}

const EQ_METRICS: Metric[] = [
  { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'eq-buy' }, conversion_window: 1, conversion_window_unit: 'hour' },
  { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'eq-buy', math: 'sum', math_property: 'price' } },
  { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'eq-view', math: 'dau' }, conversion_window: 30, conversion_window_unit: 'minute' },
  { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'eq-view' }, { kind: 'EventsNode', event: 'eq-buy' }], conversion_window: 2, conversion_window_unit: 'hour' },
  { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'eq-view' }, { kind: 'EventsNode', event: 'eq-buy' }] },
]

/** exposure events sent from distinct ids of their own: more than the old cap of 200,000 exposed persons */
const FLOOD = 205_000
/** persons of the flooded experiment answered by /decide: their $pageview carries $feature/exp-flood */
const FLOOD_GENUINE = 300

const PURCHASES = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'purchase' }, conversion_window: 1, conversion_window_unit: 'hour' }
const SIGNUP_FUNNEL = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'signup' }] }

export function experimentsContract(name: string, start: () => Promise<Stack>): void {
  describe(`experiments: ${name}`, () => {
    let stack: Stack
    const api = (path: string, method = 'GET', body?: unknown) => stack.api(`/api/projects/1${path}`, { method, ...(body === undefined ? {} : { json: body }) })
    const create = async (body: Record<string, unknown>) => {
      const r = await api('/experiments/', 'POST', body)
      const answer = await json(r)
      if (r.status !== 201) throw new Error(`${r.status}: ${JSON.stringify(answer)}`)
      return answer
    }
    const launched = async (key: string, extra: Record<string, unknown> = {}) => {
      const made = await create({ name: `Experiment ${key}`, feature_flag_key: key, metrics: [SIGNUP_FUNNEL], ...extra })
      const r = await api(`/experiments/${made.id}/`, 'PATCH', { start_date: at(-HOUR) })
      expect(r.status).toBe(200)
      return made.id as number
    }
    const results = async (id: number, index = 0) => {
      const r = await api(`/experiments/${id}/results/?metric_index=${index}`)
      const body = await json(r)
      if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`)
      return body
    }

    /** events sent through capture, in batches */
    const capture = async (events: Event[], batch = 400) => {
      for (let i = 0; i < events.length; i += batch) {
        const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: events.slice(i, i + batch) }) }))
        expect(r.status).toBe(200)
      }
      await learned(stack, 600_000)
    }
    /** waits until the event store resolves `persons` persons among the events `where` selects (merges included) */
    const resolved = async (where: string, persons: number, ms: number) => {
      let seen: unknown
      for (const deadline = Date.now() + ms; Date.now() < deadline; await Bun.sleep(100)) {
        seen = (await stack.services.query.run(1, `SELECT count(DISTINCT person_id) FROM events WHERE ${where}`)).results[0]![0]
        if (seen === persons) return
      }
      throw new Error(`${where}: ${seen} persons resolved, not ${persons}`)
    }
    /** a service like the stack's, with other caps and its counters wired to the stack's metrics */
    const serviceWith = (options: Partial<ExperimentsServiceOptions>) =>
      new ExperimentsService({
        sql: stack.services.db.sql,
        query: stack.services.query,
        maxExposedPersons: 200_000,
        maxMetricRows: 1_000_000,
        onSampled: (limit) => stack.services.metrics.experimentResultsSampled.inc({ limit }),
        onExposureFlood: () => stack.services.metrics.experimentExposureFlood.inc(),
        ...options,
      })
    const metricsText = async () => (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
    const eq = equalitySet()

    beforeAll(async () => {
      stack = await start()
      const events = [
        ...SEMANTICS,
        ...population('exp-sig', 120, [12, 36], 'signup'),
        ...population('exp-few', 20, [2, 6], 'signup'),
        ...population('exp-aa', 120, [24, 24], 'signup'),
        ...eq,
      ]
      await capture(events)
      // the person mapping reaches the event store within a second or so: wait until the merges are visible
      const ids = new Set(events.map((e) => e.properties.distinct_id))
      // an identified id and the anonymous one it names are one person (anon-5 and user-5, some eq- ids)
      const persons = ids.size - events.filter((e) => e.event === '$identify' && ids.has(e.properties.$anon_distinct_id)).length
      await resolved('person_id IS NOT NULL', persons, 30_000)
    }, 180_000)
    afterAll(() => stack?.close())

    test('create makes a draft with its inactive control/test flag; launch activates it; variants fixed after launch', async () => {
      const made = await create({ name: 'Checkout', feature_flag_key: 'checkout-exp', description: 'a test' })
      expect(made).toMatchObject({ name: 'Checkout', feature_flag_key: 'checkout-exp', start_date: null, status: 'draft', archived: false })
      expect(made.parameters.feature_flag_variants.map((v: { key: string }) => v.key)).toEqual(['control', 'test'])
      const flag = await json(api(`/feature_flags/${made.feature_flag.id}/`))
      expect(flag).toMatchObject({ key: 'checkout-exp', active: false })
      expect(flag.filters.multivariate.variants.map((v: { rollout_percentage: number }) => v.rollout_percentage)).toEqual([50, 50])
      // variants may change while a draft, and the flag follows
      const three = [{ key: 'control', rollout_percentage: 34 }, { key: 'a', rollout_percentage: 33 }, { key: 'b', rollout_percentage: 33 }]
      expect((await api(`/experiments/${made.id}/`, 'PATCH', { parameters: { feature_flag_variants: three } })).status).toBe(200)
      expect((await json(api(`/feature_flags/${made.feature_flag.id}/`))).filters.multivariate.variants.map((v: { key: string }) => v.key)).toEqual(['control', 'a', 'b'])
      const running = await json(api(`/experiments/${made.id}/`, 'PATCH', { start_date: new Date().toISOString() }))
      expect(running.status).toBe('running')
      expect((await json(api(`/feature_flags/${made.feature_flag.id}/`))).active).toBe(true)
      const changed = await api(`/experiments/${made.id}/`, 'PATCH', { parameters: { feature_flag_variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] } })
      expect(changed.status).toBe(400)
      expect(await json(changed)).toMatchObject({ type: 'validation_error', attr: 'parameters__feature_flag_variants' })
      // nor through the flags API
      const flagNow = await json(api(`/feature_flags/${made.feature_flag.id}/`))
      const viaFlag = await api(`/feature_flags/${made.feature_flag.id}/`, 'PATCH', { filters: { ...flagNow.filters, multivariate: { variants: [{ key: 'control', rollout_percentage: 10 }, { key: 'a', rollout_percentage: 90 }] } } })
      expect(viaFlag.status).toBe(400)
      expect(await json(viaFlag)).toMatchObject({ attr: 'filters' })
      expect((await api(`/feature_flags/${made.feature_flag.id}/`, 'PATCH', { name: 'renamed', filters: flagNow.filters })).status).toBe(200)
      // list filters
      const listed = async (q: string) => (await json(api(`/experiments/${q}`))).results.map((e: { id: number }) => e.id)
      expect(await listed('?status=running&search=checkout')).toEqual([made.id])
      expect(await listed('?status=draft&search=checkout')).toEqual([])
      const stopped = await json(api(`/experiments/${made.id}/`, 'PATCH', { end_date: new Date(Date.now() + 1000).toISOString(), archived: true }))
      expect(stopped).toMatchObject({ status: 'complete', archived: true })
      expect(await listed('?status=complete&archived=true&search=checkout')).toEqual([made.id])
      expect((await api(`/experiments/${made.id}/`, 'DELETE')).status).toBe(405)
      // its flag cannot be deleted from under it: the experiment goes first
      const flagDeleted = await api(`/feature_flags/${made.feature_flag.id}/`, 'PATCH', { deleted: true })
      expect(flagDeleted.status).toBe(400)
      expect(await json(flagDeleted)).toMatchObject({ type: 'validation_error', attr: 'deleted' })
      expect((await json(api(`/feature_flags/${made.feature_flag.id}/`))).deleted).toBe(false)
      expect((await api(`/experiments/${made.id}/`, 'PATCH', { deleted: true })).status).toBe(200)
      expect((await api(`/experiments/${made.id}/`)).status).toBe(404)
      expect((await api(`/feature_flags/${made.feature_flag.id}/`, 'PATCH', { deleted: true })).status).toBe(200)
    })

    test('an existing multivariate flag is reused; a boolean one, bad variants and bad input are 400', async () => {
      const variants = [{ key: 'control', rollout_percentage: 20 }, { key: 'big', rollout_percentage: 80 }]
      const flag = await json(api('/feature_flags/', 'POST', { key: 'reused-flag', filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants } } }))
      const made = await create({ name: 'Reuse', feature_flag_key: 'reused-flag' })
      expect(made.feature_flag.id).toBe(flag.id)
      expect(made.parameters.feature_flag_variants).toEqual(variants)
      await json(api('/feature_flags/', 'POST', { key: 'boolean-flag', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }))
      const refused = async (body: unknown, attr: string) => {
        const r = await api('/experiments/', 'POST', body)
        expect(r.status).toBe(400)
        expect(await json(r)).toMatchObject({ type: 'validation_error', attr })
      }
      await refused({ name: 'Bool', feature_flag_key: 'boolean-flag' }, 'feature_flag_key')
      await refused({ name: 'No key' }, 'feature_flag_key')
      const many = Array.from({ length: 21 }, (_, i) => ({ key: i === 0 ? 'control' : `v${i}`, rollout_percentage: i === 0 ? 80 : 1 }))
      await refused({ name: 'Many', feature_flag_key: 'many-variants', parameters: { feature_flag_variants: many } }, 'parameters__feature_flag_variants')
      await refused({ name: 'Order', feature_flag_key: 'order', parameters: { feature_flag_variants: [{ key: 'test', rollout_percentage: 50 }, { key: 'control', rollout_percentage: 50 }] } }, 'parameters__feature_flag_variants')
      await refused({ name: 'M', feature_flag_key: 'm', metrics: [{ kind: 'ExperimentMetric', metric_type: 'mean' }] }, 'metrics__0__source')
      await refused({ name: 'M', feature_flag_key: 'm', metrics: [{ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'x', math: 'p99' } }] }, 'metrics__0__source__math')
      await refused({ name: 'M', feature_flag_key: 'm', metrics: [{ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'x', math: 'sum', math_property: 'a"b\\' } }] }, 'metrics__0__source__math_property')
      await refused({ name: 'M', feature_flag_key: 'm', metrics: [{ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'ActionsNode', id: 'seven' } }] }, 'metrics__0__source__id')
      await refused({ name: 'M', feature_flag_key: 'm', metrics: [{ kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'ActionsNode', id: 1 }, { kind: 'EventsNode', event: 'x', bogus: 1 }] }] }, 'metrics__0__series__1__bogus')
      await refused({ name: 'D', feature_flag_key: 'd', start_date: 'yesterday' }, 'start_date')
      await refused({ name: 'x'.repeat(401), feature_flag_key: 'd' }, 'name')
      expect((await api('/experiments/?status=nonsense')).status).toBe(400)
      // a body sent as text is parsed here within the same JSON value budget as a JSON one
      const plain = (text: string) => stack.api('/api/projects/1/experiments/', { method: 'POST', body: text, headers: { 'content-type': 'text/plain' } })
      expect((await plain(JSON.stringify({ name: 'Plain', feature_flag_key: 'plain-text-body' }))).status).toBe(201)
      const tooMany = await plain(`{"name": "Values", "feature_flag_key": "values", "description": [${'0,'.repeat(2_100_000)}0]}`)
      expect(tooMany.status).toBe(400)
      expect((await json(tooMany)).detail).toContain('JSON values')
      // nothing of a refused experiment was kept: its flag was not made either
      expect((await json(api('/feature_flags/?search=many-variants'))).count).toBe(0)
    })

    test('exposures: once per person, $multiple left out (or first seen), merged persons once; metric events only after exposure, within the window', async () => {
      const id = await launched('exp-a', { metrics: [PURCHASES] })
      const answer = await results(id)
      expect(answer.baseline).toEqual({ key: 'control', number_of_samples: 1, sum: 1, sum_squares: 1 })
      expect(answer.variant_results[0]).toMatchObject({ key: 'test', number_of_samples: 3, sum: 2, sum_squares: 2, method: 'bayesian', validation_failures: ['not-enough-exposures'], significant: false, chance_to_win: null })
      expect(answer.exposures_excluded).toBe(1)
      // first_seen keeps p2 in control (its first exposure), with its purchase
      await api(`/experiments/${id}/`, 'PATCH', { exposure_criteria: { multiple_variant_handling: 'first_seen' } })
      expect((await results(id)).baseline).toEqual({ key: 'control', number_of_samples: 2, sum: 2, sum_squares: 2 })
      // no conversion window: p4's late purchase counts too (POST /query/'s ExperimentQuery goes through the same call)
      const wide = await stack.services.experiments.results(1, id, { ...PURCHASES, conversion_window: null })
      expect(wide.variant_results[0]).toMatchObject({ number_of_samples: 3, sum: 3 })
      // sum of a property (sent as a number or as text), within the window
      const revenue = await stack.services.experiments.results(1, id, { ...PURCHASES, source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'price' } })
      expect(revenue.baseline).toEqual({ key: 'control', number_of_samples: 2, sum: 11, sum_squares: 101 })
      expect(revenue.variant_results[0]).toMatchObject({ number_of_samples: 3, sum: 25.5, sum_squares: 430.25 })

      // the same metrics of an action (src/actions/): the events of its steps
      const action = async (body: Record<string, unknown>) => {
        const r = await api('/actions/', 'POST', body)
        const made = await json(r)
        if (r.status !== 201) throw new Error(`${r.status}: ${JSON.stringify(made)}`)
        return made.id as number
      }
      const bought = await action({ name: 'Bought', steps: [{ event: 'purchase' }] })
      const byAction = await stack.services.experiments.results(1, id, { ...PURCHASES, source: { kind: 'ActionsNode', id: bought } })
      expect([byAction.baseline, byAction.variant_results[0]]).toEqual([(await results(id)).baseline, (await results(id)).variant_results[0]])
      const revenueByAction = await stack.services.experiments.results(1, id, { ...PURCHASES, source: { kind: 'ActionsNode', id: bought, math: 'sum', math_property: 'price' } })
      expect([revenueByAction.baseline, revenueByAction.variant_results[0]]).toEqual([revenue.baseline, revenue.variant_results[0]])
      // a step's property filter narrows it: purchases of 10 or more (p1's 10 in control; p3's 20 in test, p4's 1000 too late)
      const big = await action({ name: 'Big purchase', steps: [{ event: 'purchase', properties: [{ key: 'price', operator: 'gte', value: 10, type: 'event' }] }] })
      const bigMetric = { ...PURCHASES, source: { kind: 'ActionsNode', id: big } }
      const byBig = await stack.services.experiments.results(1, id, bigMetric)
      expect(byBig.baseline).toEqual({ key: 'control', number_of_samples: 2, sum: 1, sum_squares: 1 })
      expect(byBig.variant_results[0]).toMatchObject({ key: 'test', number_of_samples: 3, sum: 1, sum_squares: 1 })
      // a funnel whose steps are actions, through the query API (an analytics thread): exposure, then a big purchase
      const viaQuery = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'ExperimentQuery', experiment_id: id, metric: { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'ActionsNode', id: big }], conversion_window: 1, conversion_window_unit: 'hour' } } } })
      const queried = await json(viaQuery)
      if (viaQuery.status !== 200) throw new Error(JSON.stringify(queried))
      expect(queried.baseline).toMatchObject({ number_of_samples: 2, sum: 1, step_counts: [1] })
      expect(queried.variant_results[0]).toMatchObject({ number_of_samples: 3, sum: 1, step_counts: [1] })
      // an action the project does not have
      expect(await stack.services.experiments.results(1, id, { ...PURCHASES, source: { kind: 'ActionsNode', id: 999_999 } }).catch((e) => e)).toMatchObject({ status: 404 })
    })

    const freqBaseline = (answer: { baseline: unknown }) => answer.baseline

    test('10 % vs 30 % of 120 each: significant (Bayesian and frequentist), with a sample size for the MDE', async () => {
      const id = await launched('exp-sig', { parameters: { minimum_detectable_effect: 30 } })
      const bayes = await results(id)
      expect(bayes.baseline).toEqual({ key: 'control', number_of_samples: 120, sum: 12, sum_squares: 12, step_counts: [12] })
      expect(bayes.variant_results[0]).toMatchObject({ key: 'test', number_of_samples: 120, sum: 36, step_counts: [36], significant: true, validation_failures: [] })
      expect(bayes.variant_results[0].chance_to_win).toBeGreaterThan(0.95)
      expect(bayes.variant_results[0].credible_interval[0]).toBeGreaterThan(0)
      expect(bayes.recommended_sample_size).toBe(1600)
      await api(`/experiments/${id}/`, 'PATCH', { stats_config: { method: 'frequentist' } })
      const freq = (await results(id)).variant_results[0]
      expect(freq).toMatchObject({ method: 'frequentist', significant: true })
      expect(freq.p_value).toBeLessThan(0.05)
      // the same through the query API's ExperimentQuery (never from its cache: always computed)
      const viaQuery = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'ExperimentQuery', experiment_id: id } } })
      const queried = await json(viaQuery)
      if (viaQuery.status !== 200) throw new Error(JSON.stringify(queried))
      expect(queried).toMatchObject({ baseline: freqBaseline(bayes), variant_results: [{ key: 'test', method: 'frequentist', p_value: freq.p_value }], is_cached: false })
      const bad = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'ExperimentQuery', experiment_id: id, bogus: 1 } } })
      expect([bad.status, (await json(bad)).attr]).toEqual([400, 'query__bogus'])
      console.log(`10 % vs 30 % of 120: chance to win ${bayes.variant_results[0].chance_to_win.toFixed(4)}, p = ${freq.p_value.toFixed(4)}`)
    })

    test('20 vs 20: not enough exposures; an A/A test is not significant; a draft has no results', async () => {
      const few = await results(await launched('exp-few'))
      // the control's 2 conversions are also under the funnel's 5
      expect(few.variant_results[0]).toMatchObject({ number_of_samples: 20, validation_failures: ['not-enough-exposures', 'not-enough-metric-data'], significant: false, chance_to_win: null })
      const aa = (await results(await launched('exp-aa'))).variant_results[0]
      expect(aa).toMatchObject({ number_of_samples: 120, sum: 24, significant: false, validation_failures: [] })
      expect(aa.chance_to_win).toBeGreaterThan(0.05)
      expect(aa.chance_to_win).toBeLessThan(0.95)
      const draft = await create({ name: 'Draft', feature_flag_key: 'exp-draft', metrics: [SIGNUP_FUNNEL] })
      const r = await api(`/experiments/${draft.id}/results/`)
      expect(r.status).toBe(400)
      expect(await json(r)).toMatchObject({ code: 'not_started' })
      expect((await api(`/experiments/${draft.id}/results/?metric_index=7`)).status).toBe(400)
    })

    /** the experiment on flag `exp-eq`, with its three variants, launched an hour before T0 */
    let eqId: number | undefined
    const eqExperiment = async () => {
      eqId ??= await launched('exp-eq', { parameters: { feature_flag_variants: EQ_VARIANTS.map((key, i) => ({ key, rollout_percentage: i === 0 ? 34 : 33 })) } })
      return eqId
    }
    const eqWindow = (): Window => ({ flagKey: 'exp-eq', variants: EQ_VARIANTS, from: T0 - HOUR, to: Date.now() })
    const countsOf = (answer: { baseline: unknown; variant_results: Record<string, unknown>[] }) => [
      answer.baseline,
      ...answer.variant_results.map(({ key, number_of_samples, sum, sum_squares, step_counts }) => ({ key, number_of_samples, sum, sum_squares, ...(step_counts ? { step_counts } : {}) })),
    ]

    test('counted in the store: the same numbers and statistics as every exposed person read and joined one by one', async () => {
      const id = await eqExperiment()
      const query = stack.services.query
      for (const metric of EQ_METRICS) {
        for (const handling of ['exclude', 'first_seen'] as const) {
          const reference = await perPersonCounts(query, 1, eqWindow(), metric, handling)
          const counted = await countVariants(query, 1, eqWindow(), metric, handling, { maxExposedPersons: 200_000, maxMetricRows: 1_000_000 })
          expect(counted.counts).toEqual(reference.counts)
          expect(counted.excluded).toBe(reference.excluded)
          expect(counted.samplingRate).toBe(1)
          expect(counted.sampledBy).toEqual([])
        }
        // the whole answer too: counts, intervals, chance to win or p-value, significance, validation failures
        for (const method of ['bayesian', 'frequentist'] as const) {
          await api(`/experiments/${id}/`, 'PATCH', { stats_config: { method } })
          const answer = await stack.services.experiments.results(1, id, metric)
          const reference = await perPersonCounts(query, 1, eqWindow(), metric, 'exclude')
          const expected = resultsAnswer(metric, reference.counts, method, null, reference.excluded)
          expect(countsOf(answer)).toEqual(reference.counts)
          expect(answer.variant_results).toEqual(expected.variant_results)
          expect(answer.exposures_excluded).toBe(reference.excluded)
          expect(answer.sampling_rate).toBe(1)
        }
      }
      // the data set exercises what it means to: persons in two variants, and metric events on both sides of the exposure
      const reference = await perPersonCounts(query, 1, eqWindow(), EQ_METRICS[4]!, 'exclude')
      expect(reference.excluded).toBeGreaterThan(3)
      expect(reference.counts.every((c) => c.number_of_samples > 10 && c.sum > 0)).toBe(true)
      const first = await perPersonCounts(query, 1, eqWindow(), EQ_METRICS[0]!, 'first_seen')
      expect(first.counts.reduce((n, c) => n + c.number_of_samples, 0)).toBe(reference.counts.reduce((n, c) => n + c.number_of_samples, 0) + reference.excluded)
    })

    test('past EXPERIMENT_MAX_EXPOSED_PERSONS or EXPERIMENT_MAX_METRIC_ROWS: a uniform sample of persons, the same every time, its rate in the answer; counted', async () => {
      const id = await eqExperiment()
      await api(`/experiments/${id}/`, 'PATCH', { stats_config: { method: 'bayesian' } })
      const funnel = EQ_METRICS[4]!
      const full = await stack.services.experiments.results(1, id, funnel)
      const fewPersons = serviceWith({ maxExposedPersons: 20 })
      const sampled = await fewPersons.results(1, id, funnel)
      expect(sampled.sampling_rate).toBeGreaterThan(0.05)
      expect(sampled.sampling_rate).toBeLessThan(1)
      expect(sampled.warnings).toContainEqual(expect.objectContaining({ type: 'sampled', sampling_rate: sampled.sampling_rate, limits: ['exposed_persons'] }))
      // the same sample every time: the same answer
      const again = await fewPersons.results(1, id, funnel)
      expect({ ...again, last_refresh: null }).toEqual({ ...sampled, last_refresh: null })
      // exactly the per-person computation over the sample's persons (chosen here from their ids)
      const reference = await perPersonCounts(stack.services.query, 1, eqWindow(), funnel, 'exclude', sampleOf(sampled.sampling_rate))
      expect(countsOf(sampled)).toEqual(reference.counts)
      expect(sampled.exposures_excluded).toBe(reference.excluded)
      const samples = (a: typeof full) => countsOf(a).reduce((n: number, c) => n + (c as { number_of_samples: number }).number_of_samples, 0)
      expect(samples(sampled)).toBeLessThan(samples(full))
      expect(samples(sampled)).toBeGreaterThan(0)
      // the metric events' cap samples the same way
      const fewRows = await serviceWith({ maxMetricRows: 30 }).results(1, id, funnel)
      expect(fewRows.sampling_rate).toBeLessThan(1)
      expect(fewRows.warnings).toContainEqual(expect.objectContaining({ type: 'sampled', limits: ['metric_rows'] }))
      // an experiment without exposures is still 0, not a sample
      const none = await serviceWith({ maxExposedPersons: 1, maxMetricRows: 1 }).results(1, await launched('exp-sig-capped'), null)
      expect(none).toMatchObject({ baseline: { number_of_samples: 0 }, sampling_rate: 1 })
      const metrics = await metricsText()
      expect(metrics).toMatch(/experiment_results_sampled_total\{limit="exposed_persons"\} [1-9]/)
      expect(metrics).toMatch(/experiment_results_sampled_total\{limit="metric_rows"\} [1-9]/)
    })

    test(`a flood of ${FLOOD} exposures through capture with the public token: results still 200, exact, the flood named and counted`, async () => {
      const flood: Event[] = []
      for (let i = 0; i < FLOOD; i++) flood.push(exposure('exp-flood', `flood-${i}`, 1000 + (i % 3_600_000), i % 2 ? 'test' : 'control'))
      for (let i = 0; i < FLOOD_GENUINE; i++) {
        const variant = i % 2 ? 'test' : 'control'
        const id = `genuine-${i}`
        flood.push(ev('$pageview', id, 500, { [`$feature/exp-flood`]: variant }))
        flood.push(exposure('exp-flood', id, 1000, variant))
        if (i % 10 < 2) flood.push(ev('flood-signup', id, 60_000, { [`$feature/exp-flood`]: variant }))
      }
      const started = Date.now()
      await capture(flood, 2000)
      await resolved(`event = '$feature_flag_called' AND properties.$feature_flag = 'exp-flood'`, FLOOD + FLOOD_GENUINE, 600_000)
      console.log(`${FLOOD + FLOOD_GENUINE} exposed persons captured, learned and resolved in ${((Date.now() - started) / 1000).toFixed(1)} s`)
      const id = await launched('exp-flood', { metrics: [{ kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'flood-signup' }] }] })
      const t = performance.now()
      const r = await api(`/experiments/${id}/results/`)
      const answer = await json(r)
      console.log(`results of ${FLOOD + FLOOD_GENUINE} exposed persons: ${r.status} in ${Math.round(performance.now() - t)} ms`)
      expect(r.status).toBe(200)
      // every person counted (exposed persons are counted in the store; only the 60 who signed up are joined here)
      expect(answer.sampling_rate).toBe(1)
      expect(answer.baseline).toEqual({ key: 'control', number_of_samples: (FLOOD + FLOOD_GENUINE) / 2, sum: 30, sum_squares: 30, step_counts: [30] })
      expect(answer.variant_results[0]).toMatchObject({ key: 'test', number_of_samples: (FLOOD + FLOOD_GENUINE) / 2, sum: 30, step_counts: [30], validation_failures: [] })
      expect(answer.warnings).toEqual([
        expect.objectContaining({ type: 'exposures_unexplained', exposed_persons: FLOOD + FLOOD_GENUINE, persons_seen_with_flag: FLOOD_GENUINE }),
      ])
      // counted where the serving thread's registry sees it
      const before = Number((await metricsText()).match(/^experiment_exposure_flood_total (\d+)/m)?.[1] ?? 0)
      const counted = await serviceWith({}).results(1, id, null)
      expect(counted.warnings.map((w: { type: string }) => w.type)).toEqual(['exposures_unexplained'])
      expect(Number((await metricsText()).match(/^experiment_exposure_flood_total (\d+)/m)?.[1])).toBe(before + 1)
      // a small experiment is not called one: exp-few's 40 exposed persons were never seen with the flag elsewhere either
      const few = (await json(api('/experiments/?search=exp-few'))).results.find((e: { feature_flag_key: string }) => e.feature_flag_key === 'exp-few')
      expect((await serviceWith({}).results(1, few.id, null)).warnings).toEqual([])
    }, 900_000)
  })
}
