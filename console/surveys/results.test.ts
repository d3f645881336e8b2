import { describe, expect, test } from 'bun:test'
import { answersNode, choiceCounts, responseCounts, chosen, countsNode, figures, percentText, ratingCounts, ratingValues, responseExpr } from './results'
import { emptyQuestion, surveyBody, surveyStatus } from './types'
import { hogqlString } from '../lib/hogql'

describe("a survey's results", () => {
  test("an answer is read with PostHog's helpers, one per submission; values are quoted literals", () => {
    expect(responseExpr({ id: 'q1', type: 'open', question: 'x' }, 0)).toBe("getSurveyResponse(0, 'q1', false)")
    expect(responseExpr({ type: 'multiple_choice', question: 'x' }, 2)).toBe('getSurveyResponse(2, null, true)')
    expect(hogqlString("it's \\ here")).toBe("'it\\'s \\\\ here'")
    const node = countsNode({ id: "a'b" }, { id: 'q', type: 'rating', question: 'x' }, 0)
    expect(node.where).toEqual(["uniqueSurveySubmissionsFilter('a\\'b')", "getSurveyResponse(0, 'q', false) IS NOT NULL"])
    expect(node.event).toBe('survey sent')
    expect(answersNode({ id: 's' }, { id: 'q', type: 'open', question: 'x' }, 0, 25).offset).toBe(25)
  })

  test('a rating: every value of the scale in order, answers off it apart (0–10 on a 10 scale)', () => {
    expect(ratingValues(10)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(ratingValues(5)).toEqual([1, 2, 3, 4, 5])
    const { counts, offScale } = ratingCounts({ type: 'rating', question: 'x', scale: 5 }, [
      ['5', 3],
      [4, '2'],
      ['9', 1],
      ['oops', 1],
    ])
    expect(counts).toEqual([
      { value: '1', count: 0 },
      { value: '2', count: 0 },
      { value: '3', count: 0 },
      { value: '4', count: 2 },
      { value: '5', count: 3 },
    ])
    expect(offScale).toBe(2)
  })

  test('choices: in their order, an "other" answer after them; a multiple choice counts each pick', () => {
    expect(choiceCounts({ type: 'single_choice', question: 'x', choices: ['A', 'B'] }, [['B', 4], ['Something else', 1]])).toEqual([
      { value: 'A', count: 0 },
      { value: 'B', count: 4 },
      { value: 'Something else', count: 1 },
    ])
    expect(choiceCounts({ type: 'multiple_choice', question: 'x', choices: ['A', 'B', 'C'] }, [['["A","B"]', 2], ['["B"]', 3], ['["B","B"]', 1]])).toEqual([
      { value: 'A', count: 2 },
      { value: 'B', count: 6 },
      { value: 'C', count: 0 },
    ])
    expect(chosen('[not json')).toEqual(['[not json'])
    expect(chosen(['x', 'y'])).toEqual(['x', 'y'])
  })

  test('responses per survey for the list: counts by survey id, other rows left out', () => {
    expect(responseCounts({ results: [['s1', 3], [null, 9], ['s2', '4']] })).toEqual({ s1: 3, s2: 4 })
  })

  test("the figures from PostHog's stats answer", () => {
    const f = figures({ stats: { 'survey shown': { total_count: 12 }, 'survey sent': { total_count: 5 } }, rates: { response_rate: 41.666 } })
    expect(f).toEqual({ shown: 12, sent: 5, dismissed: 0, responseRate: 41.666 })
    expect(percentText(f.responseRate)).toBe('41.7%')
    expect(percentText(null)).toBe('—')
  })
})

describe('a new survey', () => {
  const base = { name: ' NPS ', type: 'popover' as const, urlContains: '', linkedFlagId: '' }

  test('the body: trimmed, one question per type with its own fields, targeting when given', () => {
    const rating = { ...emptyQuestion('rating'), question: 'How likely?', scale: '10' }
    const choice = { ...emptyQuestion('multiple_choice'), question: 'Why?', choices: 'Price\n\n UX \nPrice' }
    const link = { ...emptyQuestion('link'), question: 'Book', link: 'https://example.com/call' }
    const body = surveyBody({ ...base, questions: [rating, choice, link], urlContains: ' /pricing ', linkedFlagId: '7' })
    expect(body).toEqual({
      name: 'NPS',
      type: 'popover',
      questions: [
        { type: 'rating', question: 'How likely?', display: 'number', scale: 10, lowerBoundLabel: 'Unlikely', upperBoundLabel: 'Very likely' },
        { type: 'multiple_choice', question: 'Why?', choices: ['Price', 'UX'] },
        { type: 'link', question: 'Book', link: 'https://example.com/call', buttonText: undefined },
      ],
      conditions: { url: '/pricing', urlMatchType: 'icontains' },
      linked_flag_id: 7,
    })
  })

  test('what cannot be sent is said before sending', () => {
    expect(surveyBody({ ...base, name: ' ', questions: [emptyQuestion()] })).toBe('The survey needs a name.')
    expect(surveyBody({ ...base, questions: [emptyQuestion()] })).toBe('Question 1 has no text.')
    expect(surveyBody({ ...base, questions: [{ ...emptyQuestion('single_choice'), question: 'x', choices: 'only' }] })).toContain('at least two choices')
    expect(surveyBody({ ...base, questions: [{ ...emptyQuestion('link'), question: 'x', link: 'javascript:alert(1)' }] })).toContain('https:// or mailto:')
    expect(surveyBody({ ...base, questions: [{ ...emptyQuestion('rating'), question: 'x', scale: '4' }] })).toContain('the scale is one of')
  })

  test('status: a draft until started, running until ended', () => {
    expect(surveyStatus({ start_date: null, end_date: null })).toBe('draft')
    expect(surveyStatus({ start_date: '2026-01-01', end_date: null })).toBe('running')
    expect(surveyStatus({ start_date: '2026-01-01', end_date: '2026-01-02' })).toBe('stopped')
  })
})
