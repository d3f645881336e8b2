import { describe, expect, test } from 'bun:test'
import { editBody, formOf } from './edit'
import { emptyQuestion, type Survey, type SurveyForm } from './types'

const stored = (over: Partial<Survey> = {}): Survey => ({
  id: 's1',
  name: 'NPS',
  type: 'popover',
  questions: [
    { id: 'q-rate', type: 'rating', question: 'How likely?', scale: 10, display: 'emoji', lowerBoundLabel: 'No', upperBoundLabel: 'Yes', description: 'be honest', optional: true },
    { id: 'q-pick', type: 'single_choice', question: 'Why?', choices: ['Price', 'Speed'], branching: { type: 'response_based', responseValues: { 0: 'end' } } },
  ],
  conditions: { url: '^/pricing', urlMatchType: 'regex', seenSurveyWaitPeriodInDays: 30 },
  linked_flag: { id: 7, key: 'beta' },
  start_date: '2026-11-01T00:00:00Z',
  end_date: null,
  archived: false,
  created_at: '2026-11-01T00:00:00Z',
  ...over,
})

const formFor = (survey: Survey): SurveyForm => {
  const form = formOf(survey)
  if (typeof form === 'string') throw new Error(form)
  return form
}

describe('editing a stored survey', () => {
  test('the form holds every question with its id, the URL and the linked flag', () => {
    const form = formFor(stored())
    expect(form.questions.map((q) => [q.id, q.type, q.question])).toEqual([
      ['q-rate', 'rating', 'How likely?'],
      ['q-pick', 'single_choice', 'Why?'],
    ])
    expect(form.questions[1]!.choices).toBe('Price\nSpeed')
    expect(form).toMatchObject({ name: 'NPS', type: 'popover', urlContains: '^/pricing', linkedFlagId: '7' })
  })

  test('saved unchanged: what the form does not show is kept (description, emoji display, branching, other conditions)', () => {
    const survey = stored()
    const body = editBody(formFor(survey), survey) as Record<string, unknown>
    expect(body.questions).toEqual(survey.questions)
    expect(body.conditions).toEqual(survey.conditions)
    expect(body.linked_flag_id).toBe(7)
  })

  test('a changed choice list drops branching by position; a new question gets no id (the server gives one)', () => {
    const survey = stored()
    const form = formFor(survey)
    form.questions[1] = { ...form.questions[1]!, choices: 'Speed\nPrice\nSupport' }
    form.questions.push({ ...emptyQuestion('open'), question: 'Anything else?' })
    const body = editBody(form, survey) as { questions: Record<string, unknown>[] }
    expect(body.questions[1]).toEqual({ id: 'q-pick', type: 'single_choice', question: 'Why?', choices: ['Speed', 'Price', 'Support'] })
    expect(body.questions[2]).toEqual({ type: 'open', question: 'Anything else?' })
  })

  test('a question whose type changes keeps its id, description and optional, nothing of the old type', () => {
    const survey = stored()
    const form = formFor(survey)
    form.questions[0] = { ...form.questions[0]!, type: 'open' }
    const body = editBody(form, survey) as { questions: Record<string, unknown>[] }
    expect(body.questions[0]).toEqual({ id: 'q-rate', type: 'open', question: 'How likely?', description: 'be honest', optional: true })
  })

  test('a new URL is matched as "contains"; an empty one leaves the other conditions; no flag sends null', () => {
    const survey = stored()
    const form = formFor(survey)
    form.urlContains = '/pricing'
    expect((editBody(form, survey) as { conditions: unknown }).conditions).toEqual({ url: '/pricing', urlMatchType: 'icontains', seenSurveyWaitPeriodInDays: 30 })
    form.urlContains = ''
    form.linkedFlagId = ''
    const body = editBody(form, survey) as Record<string, unknown>
    expect(body.conditions).toEqual({ seenSurveyWaitPeriodInDays: 30 })
    expect(body.linked_flag_id).toBeNull()
    expect((editBody(form, stored({ conditions: { url: 'x' } })) as Record<string, unknown>).conditions).toBeNull()
  })

  test('what the form cannot show is refused with the reason, not half-edited', () => {
    expect(formOf(stored({ type: 'external_survey' }))).toContain('external_survey')
    expect(formOf(stored({ questions: [{ id: 'x', type: 'matrix', question: '?' }] }))).toContain('matrix')
    expect(formOf(stored({ questions: Array.from({ length: 21 }, (_, i) => ({ id: `q${i}`, type: 'open', question: 'x' })) }))).toContain('20')
    const form = formFor(stored())
    form.questions[1] = { ...form.questions[1]!, choices: 'only one' }
    expect(editBody(form, stored())).toBe('Question 2 needs at least two choices (one a line).')
  })
})
