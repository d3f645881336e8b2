// A survey's results, read through the query API (EventsQuery over its `survey sent` events) and folded per question:
// a rating's distribution, a choice question's counts, an open question's answers. The query uses PostHog's own
// helpers, as its results page does: getSurveyResponse() reads `$survey_response_<question id>`, else the older
// `$survey_response` (first question) / `$survey_response_<index>`; uniqueSurveySubmissionsFilter() keeps one event
// per submission (a survey with partial responses sends several).
import { hogqlString } from '../lib/hogql'
import type { Survey, SurveyQuestion } from './types'

/** The answer to question `index` in a `survey sent` event, as HogQL (null when it has none). */
export function responseExpr(question: SurveyQuestion, index: number): string {
  const id = question.id ? hogqlString(question.id) : 'null'
  return `getSurveyResponse(${index}, ${id}, ${question.type === 'multiple_choice' ? 'true' : 'false'})`
}

function surveyEvents(survey: Pick<Survey, 'id'>, question: SurveyQuestion, index: number) {
  return {
    kind: 'EventsQuery' as const,
    event: 'survey sent',
    after: 'all',
    where: [`uniqueSurveySubmissionsFilter(${hogqlString(survey.id)})`, `${responseExpr(question, index)} IS NOT NULL`],
  }
}

/** How many distinct answers a count reads at most (a rating has at most 11, choices at most 20 and their mixes). */
export const COUNT_ROWS = 1000

/** The query counting each distinct answer of a rating or choice question. */
export function countsNode(survey: Pick<Survey, 'id'>, question: SurveyQuestion, index: number) {
  return { ...surveyEvents(survey, question, index), select: [responseExpr(question, index), 'count()'], orderBy: ['count() DESC'], limit: COUNT_ROWS }
}

export const ANSWERS_PAGE = 25

/** A page of an open question's answers, newest first, each with its distinct id and time. */
export function answersNode(survey: Pick<Survey, 'id'>, question: SurveyQuestion, index: number, offset: number) {
  return {
    ...surveyEvents(survey, question, index),
    select: [responseExpr(question, index), 'distinct_id', 'timestamp'],
    orderBy: ['timestamp DESC'],
    limit: ANSWERS_PAGE,
    offset,
  }
}

/** Surveys whose responses the list counts at most (a project's surveys are fewer). */
export const COUNTED_SURVEYS = 10_000

/**
 * The responses of each survey, as the list shows them: its `survey sent` events, one per submission (what
 * uniqueSurveySubmissionsFilter keeps, for every survey at once: an event without `$survey_completed`, or the one
 * that completed it).
 */
export function responseCountsNode() {
  return {
    kind: 'EventsQuery' as const,
    event: 'survey sent',
    after: 'all',
    select: ['properties.$survey_id', 'count()'],
    where: ['properties.$survey_id IS NOT NULL', "(properties.$survey_completed IS NULL OR JSONExtractBool(properties, '$survey_completed') = 1)"],
    orderBy: ['count() DESC'],
    limit: COUNTED_SURVEYS,
  }
}

export function responseCounts(answer: { results: [unknown, unknown][] }): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const [id, count] of answer.results ?? []) if (typeof id === 'string') counts[id] = number(count)
  return counts
}

/** The values a rating question offers: 0–10 on a 10 scale (NPS), 1–N otherwise. */
export function ratingValues(scale: number | undefined): number[] {
  const n = scale ?? 10
  const first = n === 10 ? 0 : 1
  return Array.from({ length: n - first + 1 }, (_, i) => first + i)
}

export interface Count {
  value: string
  count: number
}

/** Rows of [answer, count] as the counting query answers them. */
export type CountRow = [unknown, unknown]

function number(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value)
  return Number.isFinite(n) ? n : 0
}

/** A rating's distribution: every value of its scale in order (zero when nobody chose it); answers off the scale apart. */
export function ratingCounts(question: SurveyQuestion, rows: CountRow[]): { counts: Count[]; offScale: number } {
  const values = ratingValues(question.scale)
  const byValue = new Map(values.map((v) => [v, 0]))
  let offScale = 0
  for (const [answer, count] of rows) {
    const value = Number(typeof answer === 'string' ? answer.trim() : answer)
    if (byValue.has(value)) byValue.set(value, byValue.get(value)! + number(count))
    else offScale += number(count)
  }
  return { counts: values.map((v) => ({ value: String(v), count: byValue.get(v)! })), offScale }
}

/** A multiple-choice answer: a JSON array of choices (as the store gives it back), or one choice as text. */
export function chosen(answer: unknown): string[] {
  if (Array.isArray(answer)) return answer.map(String)
  if (typeof answer !== 'string') return answer === null || answer === undefined ? [] : [String(answer)]
  if (answer.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(answer)
      if (Array.isArray(parsed)) return parsed.map((c) => (typeof c === 'string' ? c : JSON.stringify(c)))
    } catch {
      // a text answer that only starts like an array
    }
  }
  return [answer]
}

/**
 * A choice question's counts: its choices in their order, then answers that are not among them (an open "Other"),
 * most chosen first. A multiple-choice answer counts once for each of its choices.
 */
export function choiceCounts(question: SurveyQuestion, rows: CountRow[]): Count[] {
  const counts = new Map<string, number>((question.choices ?? []).map((c) => [c, 0]))
  const others = new Map<string, number>()
  for (const [answer, count] of rows) {
    const picks = question.type === 'multiple_choice' ? chosen(answer) : [typeof answer === 'string' ? answer : JSON.stringify(answer)]
    for (const pick of new Set(picks)) {
      const into = counts.has(pick) ? counts : others
      into.set(pick, (into.get(pick) ?? 0) + number(count))
    }
  }
  const extra = [...others].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  return [...counts, ...extra].map(([value, count]) => ({ value, count }))
}

/** The stats answer's parts the page shows (PostHog's `surveys/:id/stats/`). */
export interface SurveyStats {
  stats: Record<string, { total_count?: number; unique_persons?: number } | undefined>
  rates?: { response_rate?: number; dismissal_rate?: number; unique_users_response_rate?: number }
}

export interface Figures {
  shown: number
  sent: number
  dismissed: number
  /** percent, as PostHog gives it */
  responseRate: number | null
}

export function figures(answer: SurveyStats): Figures {
  const total = (event: string) => number(answer.stats?.[event]?.total_count)
  const rate = answer.rates?.response_rate
  return { shown: total('survey shown'), sent: total('survey sent'), dismissed: total('survey dismissed'), responseRate: typeof rate === 'number' && Number.isFinite(rate) ? rate : null }
}

/** 41.666 → "41.7%". */
export function percentText(rate: number | null): string {
  return rate === null ? '—' : `${Math.round(rate * 10) / 10}%`
}
