// Surveys attacked (embedded stores, small budgets): many surveys, huge ones, another project's token, markup in
// every text posthog-js shows, and the public list under load — answered from memory, never a Postgres read per
// request once warm, whatever its size.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { BASE, json, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

describe('surveys under attack', () => {
  let stack: Stack
  const api = (path: string, method = 'GET', body?: unknown) => stack.api(`/api/projects/1${path}`, { method, ...(body === undefined ? {} : { json: body }) })
  const publicList = async (token: string) => json(stack.app.handle(new Request(`${BASE}/api/surveys/?token=${token}`)))

  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', SURVEYS_MAX_PER_PROJECT: 4, SURVEY_MAX_BYTES: 200_000, SURVEY_CACHE_MAX_BYTES: 65_536 })
  }, 120_000)
  afterAll(() => stack?.close())

  test('past SURVEYS_MAX_PER_PROJECT a create is refused; huge surveys are refused by count and bytes', async () => {
    const huge = 'x'.repeat(4000)
    // the largest survey allowed: 50 questions of 4,000 characters (under 200,000 bytes)
    const big = Array.from({ length: 45 }, (_, i) => ({ type: 'open', question: `${i} ${huge}` }))
    for (let i = 0; i < 4; i++) expect((await api('/surveys/', 'POST', { name: `S${i}`, type: 'popover', questions: big, start_date: '2026-01-01T00:00:00Z' })).status).toBe(201)
    const fifth = await api('/surveys/', 'POST', { name: 'S4', type: 'popover' })
    expect(fifth.status).toBe(400)
    expect((await json(fifth)).code).toBe('limit_exceeded')
    const tooMany = await api('/surveys/', 'POST', { name: 'Q', type: 'popover', questions: Array.from({ length: 1000 }, () => ({ type: 'open', question: 'q' })) })
    expect(tooMany.status).toBe(400)
    const tooBig = await api('/surveys/', 'POST', { name: 'B', type: 'popover', questions: Array.from({ length: 50 }, () => ({ type: 'open', question: huge })) })
    expect(await json(tooBig)).toMatchObject({ code: 'limit_exceeded' })
    const choices = await api('/surveys/', 'POST', { name: 'C', type: 'popover', questions: [{ type: 'single_choice', question: 'c', choices: Array.from({ length: 5000 }, (_, i) => `c${i}`) }] })
    expect(await json(choices)).toMatchObject({ code: 'limit_exceeded', attr: 'questions__0__choices' })
    // each refusal counted by its budget
    const metrics = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
    for (const limit of ['surveys_per_project', 'questions', 'bytes', 'choices']) expect(metrics).toContain(`surveys_refused_total{limit="${limit}"} 1`)
  })

  test('the public list of a project bigger than the cache is kept: 200 requests, no Postgres read after the first', async () => {
    const first = await publicList(PROJECT_KEY)
    expect(first.surveys).toHaveLength(4)
    const size = stack.services.publicSurveys.size()
    expect(size.bytes).toBeGreaterThan(65_536) // over the budget, alone
    let reads = 0
    const original = stack.services.db.sql
    // count the list's uses of Postgres (statements and their fragments) by wrapping its tagged template
    ;(stack.services.publicSurveys as unknown as { deps: { sql: unknown } }).deps.sql = new Proxy(original, {
      apply(target, self, args) {
        reads++
        return Reflect.apply(target as never, self, args)
      },
    })
    const started = performance.now()
    for (let i = 0; i < 200; i++) expect((await publicList(PROJECT_KEY)).surveys).toHaveLength(4)
    const ms = performance.now() - started
    expect(reads).toBe(0)
    console.log(`200 public lists of ${Math.round(size.bytes / 1024)} KiB from memory: ${Math.round(ms)} ms`)
    // a write bumps the version: read once more, then from memory again
    const list = await json(api('/surveys/?limit=1'))
    await api(`/surveys/${list.results[0].id}/`, 'PATCH', { archived: true })
    expect((await publicList(PROJECT_KEY)).surveys).toHaveLength(3)
    const afterReload = reads
    expect(afterReload).toBeGreaterThan(0)
    for (let i = 0; i < 20; i++) expect((await publicList(PROJECT_KEY)).surveys).toHaveLength(3)
    expect(reads).toBe(afterReload)
    ;(stack.services.publicSurveys as unknown as { deps: { sql: unknown } }).deps.sql = original
  })

  test("another project's token sees only its own surveys; its key cannot reach ours", async () => {
    const other = await createProject(stack.services.db.sql, { name: 'Other' })
    stack.services.tokens.add(other.api_token, other.id)
    expect((await publicList(other.api_token)).surveys).toEqual([])
    const list = await json(api('/surveys/?limit=1'))
    const id = list.results[0].id
    expect((await stack.api(`/api/projects/${other.id}/surveys/${id}/`)).status).toBe(404)
    expect((await stack.api(`/api/projects/${other.id}/surveys/${id}/stats/`)).status).toBe(404)
    expect((await stack.api(`/api/projects/${other.id}/surveys/${id}/`, { method: 'DELETE' })).status).toBe(404)
  })

  test('markup in every text posthog-js shows arrives as sanitised HTML or plain text', async () => {
    const other = await createProject(stack.services.db.sql, { name: 'Markup' })
    stack.services.tokens.add(other.api_token, other.id)
    const evil = '<img src=x onerror=alert(1)><script>alert(2)</script><a href="javascript:alert(3)">go</a>'
    const r = await stack.api(`/api/projects/${other.id}/surveys/`, {
      method: 'POST',
      json: {
        name: evil, type: 'popover',
        questions: [{ type: 'single_choice', question: evil, description: evil, descriptionContentType: 'html', choices: [evil], buttonText: evil }],
        appearance: { thankYouMessageHeader: evil, thankYouMessageDescription: evil, submitButtonText: evil },
      },
    })
    expect(r.status).toBe(201)
    const [survey] = (await publicList(other.api_token)).surveys
    for (const html of [survey.questions[0].question, survey.questions[0].description, survey.appearance.thankYouMessageHeader, survey.appearance.thankYouMessageDescription]) {
      expect(html).toBe('<a>go</a>')
    }
    // rendered as text by posthog-js: kept as written
    expect(survey.questions[0].choices[0]).toBe(evil)
    expect(survey.name).toBe(evil)
  })
})
