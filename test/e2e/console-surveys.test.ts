// The console's Surveys in Chromium, driven by roles and names: an empty list, "New survey" with a rating, a single
// choice, an open and a multiple choice question and a URL to target, saved as a draft; "Launch" (asked first);
// answers sent as posthog-js sends them (survey shown / sent / dismissed through /batch/, one submission in two
// partial parts), then the survey's figures and each question's results (the rating's distribution as a chart and
// a table, the choices' counts with an answer that is not a choice, each pick of a multiple choice, the open answers
// with their persons, HTML drawn as text; a submission counted once); the list's status and responses; "Edit" of the
// running survey (question ids and answers kept); "Stop" and "Archive"; a refusal shown. On the embedded stores and on ClickHouse 18.16 + Postgres.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { fileURLToPath } from 'node:url'
import { launchBrowser } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'
import { eventually, signedInPage, tableRows } from './console-session'

const EMAIL = 'surveys@example.com'
const PASSWORD = 'console surveys password'
const NAME = 'Checkout NPS'
const SCREENSHOT = fileURLToPath(new URL('../../docs/console-surveys.png', import.meta.url))
const HOSTILE = '<img src=x onerror="window.pwned=1">not HTML'

for (const stores of ['embedded', 'real'] as const) {
  describe(`Surveys in the console (${stores === 'real' ? 'ClickHouse + Postgres' : 'embedded stores'})`, () => {
    let service: E2EService
    let browser: Browser
    let page: Page
    let survey: { id: string; questions: { id: string }[] }
    let flagId: number

    async function batch(events: Record<string, unknown>[]): Promise<void> {
      const r = await fetch(`${service.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, batch: events }) })
      expect(r.status).toBe(200)
    }

    beforeAll(async () => {
      ;[service, browser] = await Promise.all([startService(stores, { INIT_ADMIN_EMAIL: EMAIL, INIT_ADMIN_PASSWORD: PASSWORD }), launchBrowser()])
      const flag = await service.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'checkout-v2', name: 'New checkout', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } } })
      expect(flag.status).toBe(201)
      flagId = flag.body.id
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
      await service?.stop()
    })

    test('"New survey": name, four question types, a URL and a linked flag to target, saved as a draft', async () => {
      page = await signedInPage(browser, service, EMAIL, PASSWORD)
      await page.getByRole('navigation').getByRole('link', { name: 'Surveys', exact: true }).click()
      await page.getByText('No surveys yet.').waitFor()
      await page.getByRole('link', { name: 'New survey' }).click()
      await page.getByLabel('Name', { exact: true }).fill(NAME)
      const first = page.getByRole('group', { name: 'Question 1' })
      await first.getByLabel('Question', { exact: true }).fill('How likely are you to recommend us?')
      await first.getByLabel('Question type').selectOption('rating')
      await first.getByLabel('Scale').selectOption('10')
      await page.getByRole('button', { name: 'Add question' }).click()
      const second = page.getByRole('group', { name: 'Question 2' })
      await second.getByLabel('Question', { exact: true }).fill('What made you buy?')
      await second.getByLabel('Question type').selectOption('single_choice')
      await second.getByLabel('Choices').fill('Price\nSpeed\nSupport')
      await page.getByRole('button', { name: 'Add question' }).click()
      await page.getByRole('group', { name: 'Question 3' }).getByLabel('Question', { exact: true }).fill('Anything else?')
      await page.getByRole('button', { name: 'Add question' }).click()
      const fourth = page.getByRole('group', { name: 'Question 4' })
      await fourth.getByLabel('Question', { exact: true }).fill('Which pages helped?')
      await fourth.getByLabel('Question type').selectOption('multiple_choice')
      await fourth.getByLabel('Choices').fill('Home\nCart\nHelp')
      await page.getByLabel('URL contains').fill('/checkout')
      await page.getByLabel('Linked feature flag').selectOption({ label: 'checkout-v2' })
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('heading', { name: NAME, level: 1 }).waitFor()
      expect(await page.getByRole('status').first().textContent()).toBe('Draft')
      await page.getByRole('link', { name: 'checkout-v2' }).waitFor()
      const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
      const r = await service.api(`/api/projects/1/surveys/${id}/`)
      expect(r.status).toBe(200)
      survey = r.body
      expect(r.body).toMatchObject({ name: NAME, type: 'popover', start_date: null, linked_flag_id: flagId, conditions: { url: '/checkout', urlMatchType: 'icontains' } })
      expect(r.body.questions.map((q: { type: string }) => q.type)).toEqual(['rating', 'single_choice', 'open', 'multiple_choice'])
      expect(r.body.questions[1].choices).toEqual(['Price', 'Speed', 'Support'])
    }, 60_000)

    test('"Launch" asks first; answers sent then show as figures and per question, as text', async () => {
      await page.getByRole('button', { name: 'Launch' }).click()
      await page.getByRole('dialog', { name: `Launch the survey “${NAME}”?` }).getByRole('button', { name: 'Launch' }).click()
      await page.getByRole('status').filter({ hasText: 'Running' }).waitFor()
      expect((await service.api(`/api/projects/1/surveys/${survey.id}/`)).body.start_date).not.toBeNull()

      const [nps, why, more, pages] = survey.questions.map((q) => `$survey_response_${q.id}`)
      const base = { $survey_id: survey.id, $survey_name: NAME }
      const events: Record<string, unknown>[] = []
      for (const who of ['ann', 'bob', 'cy']) events.push({ event: 'survey shown', distinct_id: who, properties: base })
      // ann's submission in two parts (partial responses): the first answer, then all of them; counted once
      const submission = { $survey_submission_id: 'sub-ann' }
      events.push({ event: 'survey sent', distinct_id: 'ann', properties: { ...base, ...submission, $survey_completed: false, [nps!]: 9 } })
      events.push({ event: 'survey sent', distinct_id: 'ann', properties: { ...base, ...submission, $survey_completed: true, [nps!]: 9, [why!]: 'Price', [more!]: HOSTILE, [pages!]: ['Home', 'Help'] } })
      // posthog-js's older key for the first question, and an answer that is not a choice (an open "Other")
      events.push({ event: 'survey sent', distinct_id: 'bob', properties: { ...base, $survey_response: '10', [why!]: 'The colours', [pages!]: ['Help'] } })
      events.push({ event: 'survey dismissed', distinct_id: 'cy', properties: base })
      await batch(events)
      const read = await eventually(
        () => service.api(`/api/projects/1/surveys/${survey.id}/stats/`),
        (r) => r.body?.stats?.['survey sent']?.total_count === 3 && r.body?.stats?.['survey dismissed']?.total_count === 1,
      )
      expect(read).toMatchObject({ status: 200, body: { stats: { 'survey shown': { total_count: 3 }, 'survey sent': { total_count: 3 }, 'survey dismissed': { total_count: 1 } } } })
      const stats = read.body

      await page.getByRole('button', { name: 'Reload results' }).click()
      const figures = page.getByLabel('Survey figures').locator('dd')
      await page.getByText('Response rate').waitFor()
      const shownSentDismissed = async () => (await figures.allTextContents()).slice(0, 3)
      expect(await eventually(shownSentDismissed, (texts) => texts.join() === '3,3,1', 15_000)).toEqual(['3', '3', '1'])
      const rate = Math.round(stats.rates.response_rate * 10) / 10
      await page.locator('dd', { hasText: `${rate}%` }).waitFor()

      await page.getByRole('img', { name: 'Question 1 ratings' }).waitFor()
      // the results drawn before the answers came stay until the reload's answer: read until it is drawn
      const ratings = await eventually(() => tableRows(page.getByRole('table', { name: 'Question 1 ratings' })), (rows) => rows.find((r) => r[0] === '9')?.[1] === '1', 15_000)
      expect(ratings.map((r) => r[0])).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10'])
      expect(ratings.find((r) => r[0] === '9')!.slice(1)).toEqual(['1', '50%'])
      expect(ratings.find((r) => r[0] === '10')!.slice(1)).toEqual(['1', '50%'])
      expect(ratings.find((r) => r[0] === '0')![1]).toBe('0')

      const choices = await eventually(() => tableRows(page.getByRole('table', { name: 'Question 2 choices' })), (rows) => rows.length === 4, 15_000)
      expect(choices.map((r) => r.slice(0, 2))).toEqual([['Price', '1'], ['Speed', '0'], ['Support', '0'], ['The colours', '1']])
      // a multiple choice counts each pick
      const picks = await eventually(() => tableRows(page.getByRole('table', { name: 'Question 4 choices' })), (rows) => rows[2]?.[1] === '2', 15_000)
      expect(picks.map((r) => r.slice(0, 2))).toEqual([['Home', '1'], ['Cart', '0'], ['Help', '2']])

      const answers = page.getByRole('table', { name: 'Question 3 answers' })
      await answers.waitFor()
      const rows = await tableRows(answers)
      expect(rows).toHaveLength(1)
      expect(rows[0]!.slice(0, 2)).toEqual([HOSTILE, 'ann'])
      // drawn as text: no element made from the answer, nothing run
      expect(await answers.locator('img').count()).toBe(0)
      expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined()
      await answers.getByRole('link', { name: 'ann' }).waitFor()
      if (stores === 'embedded') await page.screenshot({ path: SCREENSHOT, fullPage: true })
    }, 90_000)

    test('the list shows its status and responses; "Edit" keeps the answers; "Stop" and "Archive" ask first; a refusal is shown', async () => {
      await page.getByRole('link', { name: 'All surveys' }).click()
      const table = page.getByRole('table', { name: 'Surveys' })
      await table.waitFor()
      await eventually(() => tableRows(table), (rows) => rows[0]?.[3] === '2', 15_000)
      expect((await tableRows(table))[0]!.slice(0, 4)).toEqual([NAME, 'Popover', 'Running', '2'])
      await table.getByRole('link', { name: NAME }).click()
      // "Edit" a running survey: its questions keep their ids, so the answers given stay with them
      await page.getByRole('link', { name: 'Edit', exact: true }).click()
      await page.getByRole('heading', { name: `Edit survey ${NAME}`, level: 1 }).waitFor()
      await page.getByText('This survey is running').waitFor()
      const third = page.getByRole('group', { name: 'Question 3' }).getByLabel('Question', { exact: true })
      expect(await third.inputValue()).toBe('Anything else?')
      await third.fill('Anything else to tell us?')
      await page.getByRole('group', { name: 'Question 2' }).getByLabel('Choices').fill('Price\nSpeed\nSupport\nDelivery')
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('link', { name: 'All surveys' }).waitFor() // the survey's page again
      const edited = (await service.api(`/api/projects/1/surveys/${survey.id}/`)).body
      expect(edited.questions.map((q: { id: string }) => q.id)).toEqual(survey.questions.map((q) => q.id))
      expect(edited.questions[2].question).toBe('Anything else to tell us?')
      expect(edited.questions[1].choices).toEqual(['Price', 'Speed', 'Support', 'Delivery'])
      expect(edited).toMatchObject({ conditions: { url: '/checkout', urlMatchType: 'icontains' }, linked_flag_id: flagId, archived: false })
      expect(edited.start_date).not.toBeNull()
      const rechosen = await eventually(() => tableRows(page.getByRole('table', { name: 'Question 2 choices' })), (rows) => rows.length === 5, 15_000)
      expect(rechosen.map((r) => r.slice(0, 2))).toEqual([['Price', '1'], ['Speed', '0'], ['Support', '0'], ['Delivery', '0'], ['The colours', '1']])
      expect((await tableRows(page.getByRole('table', { name: 'Question 3 answers' })))[0]!.slice(0, 2)).toEqual([HOSTILE, 'ann'])
      await page.getByRole('button', { name: 'Stop' }).click()
      await page.getByRole('dialog', { name: `Stop the survey “${NAME}”?` }).getByRole('button', { name: 'Stop' }).click()
      await page.getByRole('status').filter({ hasText: 'Stopped' }).waitFor()
      expect((await service.api(`/api/projects/1/surveys/${survey.id}/`)).body.end_date).not.toBeNull()
      // a stopped survey keeps its results
      await page.getByRole('table', { name: 'Question 3 answers' }).waitFor()
      await page.getByRole('button', { name: `Archive survey ${NAME}` }).click()
      await page.getByRole('dialog', { name: `Archive the survey “${NAME}”?` }).getByRole('button', { name: 'Archive' }).click()
      await page.getByRole('status').filter({ hasText: 'Stopped, archived' }).waitFor()
      expect((await service.api(`/api/projects/1/surveys/${survey.id}/`)).body.archived).toBe(true)
      // the API's refusal (a name already taken) is said in an alert, and nothing is made
      await page.goto(`${service.url}/console/surveys/new`)
      await page.getByLabel('Name', { exact: true }).fill(NAME)
      await page.getByLabel('Question', { exact: true }).fill('Again?')
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('alert').waitFor()
      expect(new URL(page.url()).pathname).toBe('/console/surveys/new')
      expect((await service.api('/api/projects/1/surveys/')).body.results).toHaveLength(1)
    }, 60_000)
  })
}
