// Surveys on every store (surveys.*.test.ts): the REST API and the flags it makes and keeps, the public list
// posthog-js reads and the remote config's `surveys`, the stats of survey events sent through /batch/ (persons
// made by the real pipeline), the HogQL helpers, and a response's `$set` reaching the person so that the internal
// targeting flag stops matching.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

const HOUR = 3_600_000
const T0 = Math.floor((Date.now() - 2 * HOUR) / 1000) * 1000
const at = (ms: number) => new Date(T0 + ms).toISOString()

const QUESTIONS = [
  { id: 'q-nps', type: 'rating', question: 'How likely are you to recommend us?', scale: 10, display: 'number', branching: { type: 'response_based', responseValues: { detractors: 2 } } },
  { id: 'q-why', type: 'single_choice', question: 'Why?', choices: ['Price', 'UX', 'Other'], hasOpenChoice: true },
  { id: 'q-more', type: 'open', question: 'Anything <b>else</b>?<script>alert(1)</script>' },
]

export function surveysContract(name: string, start: () => Promise<Stack>): void {
  describe(`surveys: ${name}`, () => {
    let stack: Stack
    const api = (path: string, method = 'GET', body?: unknown) => stack.api(`/api/projects/1${path}`, { method, ...(body === undefined ? {} : { json: body }) })
    const create = async (body: Record<string, unknown>) => {
      const r = await api('/surveys/', 'POST', body)
      const answer = await json(r)
      if (r.status !== 201) throw new Error(`${r.status}: ${JSON.stringify(answer)}`)
      return answer
    }
    const publicList = (query: string, headers: Record<string, string> = {}) => stack.app.handle(new Request(`${BASE}/api/surveys/${query}`, { headers }))
    const decide = async (distinctId: string): Promise<Record<string, unknown>> =>
      (await json(stack.app.handle(new Request(`${BASE}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: distinctId }) })))).featureFlags
    const capture = async (events: { event: string; distinct_id: string; timestamp: string; properties: Record<string, unknown> }[]) => {
      const batch = events.map((e) => ({ ...e, properties: { distinct_id: e.distinct_id, ...e.properties } }))
      const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))
      expect(r.status).toBe(200)
      await learned(stack, 60_000)
    }

    beforeAll(async () => {
      stack = await start()
    }, 120_000)
    afterAll(() => stack?.close())

    test('create makes the internal targeting flag, and the targeting flag from targeting_flag_filters; names are unique', async () => {
      const made = await create({
        name: 'NPS', type: 'popover', questions: QUESTIONS,
        conditions: { url: '/pricing', urlMatchType: 'icontains', seenSurveyWaitPeriodInDays: 14 },
        appearance: { backgroundColor: '#fff', position: 'right', thankYouMessageHeader: 'Thanks <img src=x onerror=alert(1)>!' },
        targeting_flag_filters: { groups: [{ properties: [{ key: 'plan', type: 'person', value: ['pro'], operator: 'exact' }], rollout_percentage: 100 }] },
      })
      expect(made).toMatchObject({ name: 'NPS', type: 'popover', schedule: 'once', start_date: null, end_date: null, archived: false })
      expect(made.questions[2].question).toBe('Anything <b>else</b>?')
      expect(made.appearance.thankYouMessageHeader).toBe('Thanks !')
      expect(made.targeting_flag.key).toMatch(/^survey-targeting-[0-9a-f]{12}$/)
      expect(made.internal_targeting_flag.key).toMatch(/^survey-targeting-[0-9a-f]{12}-custom$/)
      expect(made.internal_targeting_flag.filters.groups).toEqual([
        {
          variant: null,
          rollout_percentage: 100,
          properties: [
            { key: `$survey_dismissed/${made.id}`, type: 'person', value: 'is_not_set', operator: 'is_not_set' },
            { key: `$survey_responded/${made.id}`, type: 'person', value: 'is_not_set', operator: 'is_not_set' },
          ],
        },
      ])
      // ordinary flags: listed by the flags API
      const flags = await json(api(`/feature_flags/${made.targeting_flag.id}/`))
      expect(flags).toMatchObject({ key: made.targeting_flag.key, active: true })
      const again = await api('/surveys/', 'POST', { name: 'NPS', type: 'popover' })
      expect(again.status).toBe(400)
      expect((await json(again)).attr).toBe('name')
      // a full rollout with no properties is refused
      const everyone = await api('/surveys/', 'POST', { name: 'Everyone', type: 'popover', targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
      expect(everyone.status).toBe(400)
      expect((await json(everyone)).attr).toBe('targeting_flag_filters')
      // list, paged; retrieve
      const list = await json(api('/surveys/?limit=1'))
      expect(list.count).toBeGreaterThanOrEqual(1)
      expect(list.results).toHaveLength(1)
      expect((await json(api(`/surveys/${made.id}/`))).name).toBe('NPS')
      expect((await api('/surveys/not-a-uuid/')).status).toBe(404)
    })

    test('hostile surveys are refused: 1,000 questions, javascript: links, unknown appearance, a flag of another project', async () => {
      const many = Array.from({ length: 1000 }, (_, i) => ({ type: 'open', question: `Q${i}` }))
      const r = await api('/surveys/', 'POST', { name: 'Huge', type: 'popover', questions: many })
      expect(r.status).toBe(400)
      expect(await json(r)).toMatchObject({ code: 'limit_exceeded', attr: 'questions' })
      const link = await api('/surveys/', 'POST', { name: 'Link', type: 'popover', questions: [{ type: 'link', question: 'Go', link: 'javascript:alert(1)' }] })
      expect(link.status).toBe(400)
      expect((await json(link)).attr).toBe('questions__0__link')
      const css = await api('/surveys/', 'POST', { name: 'Css', type: 'popover', appearance: { backgroundColor: 'red;} body{display:none' } })
      expect(css.status).toBe(400)
      const linked = await api('/surveys/', 'POST', { name: 'Linked', type: 'popover', linked_flag_id: 999999 })
      expect(linked.status).toBe(400)
      expect((await json(linked)).attr).toBe('linked_flag_id')
      const branch = await api('/surveys/', 'POST', { name: 'Branch', type: 'popover', questions: [{ type: 'open', question: 'a', branching: { type: 'specific_question', index: 5 } }] })
      expect(branch.status).toBe(400)
    })

    test('the public list: token only, CORS-open, not archived; the remote config says surveys; stop and archive', async () => {
      const missing = await publicList('')
      expect(missing.status).toBe(401)
      expect((await json(missing)).code).toBe('missing_api_key')
      expect((await publicList('?token=phc_nobody')).status).toBe(401)
      const made = await create({ name: 'Public one', type: 'popover', questions: [{ type: 'open', question: 'Hi?' }] })
      const launched = await json(api(`/surveys/${made.id}/`, 'PATCH', { start_date: at(0) }))
      expect(launched.start_date).toBe(at(0))
      const r = await publicList(`?token=${PROJECT_KEY}`, { origin: 'https://shop.example' })
      expect(r.status).toBe(200)
      expect(r.headers.get('access-control-allow-origin')).toBe('https://shop.example')
      const body = await json(r)
      expect(body.survey_config).toBeNull()
      const mine = body.surveys.find((s: { id: string }) => s.id === made.id)
      expect(mine).toMatchObject({ name: 'Public one', type: 'popover', start_date: at(0), end_date: null, internal_targeting_flag_key: made.internal_targeting_flag.key, targeting_flag_key: null })
      expect(mine.description).toBeUndefined()
      // without the slash too
      expect((await json(stack.app.handle(new Request(`${BASE}/api/surveys?token=${PROJECT_KEY}`)))).surveys.length).toBe(body.surveys.length)
      const config = await json(stack.app.handle(new Request(`${BASE}/array/${PROJECT_KEY}/config`)))
      expect(config.surveys).toBe(true)
      // stop: the internal flag is switched off; archive: gone from the list
      const stopped = await json(api(`/surveys/${made.id}/`, 'PATCH', { end_date: at(HOUR) }))
      expect(stopped.internal_targeting_flag.active).toBe(false)
      expect(await decide('someone-new')).not.toHaveProperty(made.internal_targeting_flag.key, true)
      await api(`/surveys/${made.id}/`, 'PATCH', { archived: true })
      const after = await json(publicList(`?token=${PROJECT_KEY}`))
      expect(after.surveys.find((s: { id: string }) => s.id === made.id)).toBeUndefined()
    })

    test('updates keep the flags in step: new filters, stop and relaunch, iterations, remove_targeting_flag', async () => {
      const made = await create({ name: 'Kept', type: 'popover', targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: 30 }] } })
      const flag = (id: number) => json(api(`/feature_flags/${id}/`))
      let patched = await json(api(`/surveys/${made.id}/`, 'PATCH', { targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: 60 }] } }))
      expect(patched.targeting_flag.id).toBe(made.targeting_flag.id)
      expect((await flag(made.targeting_flag.id)).filters.groups[0].rollout_percentage).toBe(60)
      // stopped: both flags off; end_date cleared: both on again
      patched = await json(api(`/surveys/${made.id}/`, 'PATCH', { start_date: at(0), end_date: at(HOUR) }))
      expect([(await flag(made.targeting_flag.id)).active, (await flag(made.internal_targeting_flag.id)).active]).toEqual([false, false])
      patched = await json(api(`/surveys/${made.id}/`, 'PATCH', { end_date: null }))
      expect([(await flag(made.targeting_flag.id)).active, (await flag(made.internal_targeting_flag.id)).active]).toEqual([true, true])
      // iterations: the internal flag reads this iteration's properties
      patched = await json(api(`/surveys/${made.id}/`, 'PATCH', { iteration_count: 3, iteration_frequency_days: 30, schedule: 'recurring' }))
      expect(patched).toMatchObject({ current_iteration: 1, iteration_start_dates: [at(0), at(30 * 24 * HOUR), at(60 * 24 * HOUR)] })
      expect((await flag(made.internal_targeting_flag.id)).filters.groups[0].properties[1].key).toBe(`$survey_responded/${made.id}/1`)
      // remove_targeting_flag: the flag deleted, the survey without one
      patched = await json(api(`/surveys/${made.id}/`, 'PATCH', { remove_targeting_flag: true }))
      expect(patched.targeting_flag).toBeNull()
      expect((await flag(made.targeting_flag.id)).deleted).toBe(true)
      expect((await api(`/surveys/${made.id}/`, 'PATCH', { targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })).status).toBe(400)
    })

    test('delete removes the survey and its flags', async () => {
      const made = await create({ name: 'Doomed', type: 'widget', targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: 50 }] } })
      const r = await api(`/surveys/${made.id}/`, 'DELETE')
      expect(r.status).toBe(204)
      expect((await api(`/surveys/${made.id}/`)).status).toBe(404)
      for (const id of [made.targeting_flag.id, made.internal_targeting_flag.id]) {
        expect((await json(api(`/feature_flags/${id}/`))).deleted).toBe(true)
      }
    })

    test('stats of events sent through /batch/, partial dismissals left out; HogQL reads responses; a response stops the internal flag', async () => {
      const made = await create({ name: 'Stats', type: 'popover', questions: QUESTIONS, start_date: at(-HOUR) })
      const id = made.id as string
      const ev = (event: string, who: string, ms: number, extra: Record<string, unknown> = {}) => ({ event, distinct_id: who, timestamp: at(ms), properties: { $survey_id: id, $survey_name: 'Stats', ...extra } })
      expect(await decide('s-answers')).toHaveProperty(made.internal_targeting_flag.key, true)
      await capture([
        ev('survey shown', 's-answers', 1000),
        ev('survey sent', 's-answers', 2000, { $survey_response_q_nps: 9, '$survey_response_q-nps': 9, '$survey_response_q-why': 'UX', $survey_submission_id: 'sub-1', $survey_completed: true, $set: { [`$survey_responded/${id}`]: true } }),
        ev('survey shown', 's-dismisses', 1000),
        ev('survey dismissed', 's-dismisses', 3000, { $set: { [`$survey_dismissed/${id}`]: true } }),
        ev('survey shown', 's-partial', 1000),
        ev('survey dismissed', 's-partial', 4000, { $survey_partially_completed: true }),
        ev('survey shown', 's-looks', 1000),
        ev('survey shown', 's-looks', 5000),
        ev('survey sent', 's-legacy', 6000, { $survey_response: 7 }),
        ev('survey shown', 'other', 1000, { $survey_id: 'another-survey' }),
      ])
      let stats: any
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await Bun.sleep(200)) {
        stats = await json(api(`/surveys/${id}/stats/`))
        // on ClickHouse the events' persons arrive with the person mapping, a moment after the events
        if (stats.stats?.['survey shown']?.total_count === 5 && stats.stats['survey shown'].unique_persons === 4 && stats.stats['survey sent'].unique_persons === 2) break
      }
      if (!stats.stats) throw new Error(JSON.stringify(stats))
      expect(stats.stats['survey shown']).toMatchObject({ total_count: 5, unique_persons: 4, unique_persons_only_seen: 2, total_count_only_seen: 3, first_seen: at(1000), last_seen: at(5000) })
      expect(stats.stats['survey sent']).toMatchObject({ total_count: 2, unique_persons: 2 })
      expect(stats.stats['survey dismissed']).toMatchObject({ total_count: 1, unique_persons: 1 })
      expect(stats.rates).toEqual({ response_rate: 40, dismissal_rate: 20, unique_users_response_rate: 50, unique_users_dismissal_rate: 25 })
      expect(stats).toMatchObject({ survey_id: id, start_date: at(-HOUR), end_date: null })
      // a range that ends before the events: nothing
      const before = await json(api(`/surveys/${id}/stats/?date_to=${encodeURIComponent(at(-1000))}`))
      expect(before.stats['survey shown'].total_count).toBe(0)
      const all = await json(api('/surveys/stats/'))
      expect(all.stats['survey shown'].total_count).toBeGreaterThanOrEqual(6)
      expect(all.survey_id).toBeUndefined()
      expect((await api(`/surveys/${id}/stats/?date_from=yesterday-ish`)).status).toBe(400)
      // responses through HogQL: by question id, else the legacy key of its index
      const q = await api('/query/', 'POST', {
        query: { kind: 'HogQLQuery', query: `SELECT distinct_id, getSurveyResponse(0, 'q-nps') FROM events WHERE event = 'survey sent' AND ${`uniqueSurveySubmissionsFilter('${id}')`} ORDER BY distinct_id` },
      })
      const answer = await json(q)
      expect(q.status).toBe(200)
      expect(answer.results.map((r: unknown[]) => [r[0], String(r[1])])).toEqual([['s-answers', '9'], ['s-legacy', '7']])
      // the response's $set reached the person: the internal targeting flag no longer matches them
      let flags: Record<string, unknown> = {}
      for (const deadline = Date.now() + 15_000; Date.now() < deadline; await Bun.sleep(200)) {
        flags = await decide('s-answers')
        if (flags[made.internal_targeting_flag.key] === false) break
      }
      expect(flags[made.internal_targeting_flag.key]).toBe(false)
      expect((await decide('s-dismisses'))[made.internal_targeting_flag.key]).toBe(false)
      expect((await decide('s-looks'))[made.internal_targeting_flag.key]).toBe(true)
    }, 120_000)
  })
}
