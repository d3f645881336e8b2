// A survey's numbers in PostHog's shape (GET …/surveys/:id/stats/ and …/surveys/stats/): per event (shown,
// dismissed, sent) the events, the persons, the first and last; the persons who only saw it; the rates. One read
// of the store through the query service (the project's tenant condition, time limit and byte budget), on an
// analytics thread. Dismissals of a partially completed survey are left out, as PostHog leaves them out; persons are
// counted as the query API counts them (a personless visitor is one person).
import type { Sql } from 'postgres'
import { databaseWork, errors } from '../http/errors'
import { UUID_PATTERN } from '../http/fields'
import { str } from '../lib/hogql-text'
import type { QueryService } from '../query/service'
import { hogqlTime } from '../experiments/counting'

export const SURVEY_EVENTS = ['survey shown', 'survey dismissed', 'survey sent'] as const

export interface EventStats {
  total_count: number
  unique_persons: number
  first_seen: string | null
  last_seen: string | null
  unique_persons_only_seen?: number
  total_count_only_seen?: number
}

const PARTIAL_DISMISSAL = "(event = 'survey dismissed' AND JSONExtractBool(properties, '$survey_partially_completed') = 1)"

function timeOf(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null
  const ms = typeof value === 'number' ? value : Date.parse(String(value).replace(' ', 'T').replace(/(T[\d:.]+)$/, '$1Z'))
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null
}

/** The HogQL of the two reads: per event, and per person of those who only saw it. */
export function statsQueries(surveyId: string | null, from: number, to: number): { perEvent: string; onlySeen: string } {
  const names = SURVEY_EVENTS.map((e) => str(e)).join(', ')
  const where = [
    `event IN (${names})`,
    surveyId === null ? 'properties.$survey_id IS NOT NULL' : `properties.$survey_id = ${str(surveyId)}`,
    `timestamp >= ${hogqlTime(from)}`,
    `timestamp <= ${hogqlTime(to)}`,
    `NOT ${PARTIAL_DISMISSAL}`,
  ].join(' AND ')
  return {
    perEvent: `SELECT event, count() AS total, count(DISTINCT person_id) AS persons, min(timestamp) AS first_seen, max(timestamp) AS last_seen
FROM events WHERE ${where} GROUP BY event ORDER BY event LIMIT 10`,
    onlySeen: `SELECT count() AS only_seen_persons, sum(shown_count) AS only_seen_total
FROM (SELECT person_id, countIf(event = 'survey shown') AS shown_count, countIf(event != 'survey shown') AS acted_count
  FROM events WHERE ${where} GROUP BY person_id) WHERE acted_count = 0 AND shown_count > 0`,
  }
}

const rate = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 100 : 0)

export class SurveyStatsService {
  constructor(private readonly deps: { sql: Sql; query: QueryService; now?: () => number }) {}

  /** One survey's (`surveyId`) or every survey's (null) numbers between the dates (ISO; defaults: its start, now). */
  async stats(teamId: number, surveyId: string | null, dateFrom: string | null, dateTo: string | null, signal?: AbortSignal) {
    let survey: { id: string; start_date: Date | null; end_date: Date | null; created_at: Date } | null = null
    if (surveyId !== null) {
      if (!UUID_PATTERN.test(surveyId)) throw errors.notFound()
      const [row] = await databaseWork(() => this.deps.sql<{ id: string; start_date: Date | null; end_date: Date | null; created_at: Date }[]>`
        select id, start_date, end_date, created_at from surveys where team_id = ${teamId} and id = ${surveyId}`)
      if (!row) throw errors.notFound()
      survey = row
    }
    const parse = (v: string | null, attr: string): number | null => {
      if (v === null || v === '') return null
      const ms = Date.parse(/^\d{4}-\d\d-\d\d$/.test(v) ? `${v}T00:00:00Z` : v)
      if (v.length > 64 || !Number.isFinite(ms)) throw errors.validation('invalid', 'Invalid date: use an ISO date or datetime.', attr)
      return ms
    }
    const now = (this.deps.now ?? Date.now)()
    const from = parse(dateFrom, 'date_from') ?? (survey ? new Date(survey.start_date ?? survey.created_at).getTime() : 0)
    const to = parse(dateTo, 'date_to') ?? now
    if (to < from) throw errors.validation('invalid', 'date_to must not be before date_from.', 'date_to')
    const { perEvent, onlySeen } = statsQueries(surveyId, Math.floor(from / 1000) * 1000, Math.ceil(to / 1000) * 1000)
    const [events, seen] = await Promise.all([this.deps.query.run(teamId, perEvent, signal), this.deps.query.run(teamId, onlySeen, signal)])
    const stats: Record<string, EventStats> = {}
    for (const name of SURVEY_EVENTS) stats[name] = { total_count: 0, unique_persons: 0, first_seen: null, last_seen: null }
    for (const [event, total, persons, first, last] of events.results) {
      const name = String(event)
      if (!(name in stats)) continue
      stats[name] = { total_count: Number(total), unique_persons: Number(persons), first_seen: timeOf(first), last_seen: timeOf(last) }
    }
    const [onlyPersons, onlyShown] = seen.results[0] ?? [0, 0]
    stats['survey shown'] = { ...stats['survey shown']!, unique_persons_only_seen: Number(onlyPersons ?? 0), total_count_only_seen: Number(onlyShown ?? 0) }
    const shown = stats['survey shown']!
    const sent = stats['survey sent']!
    const dismissed = stats['survey dismissed']!
    return {
      stats,
      rates: {
        response_rate: rate(sent.total_count, shown.total_count),
        dismissal_rate: rate(dismissed.total_count, shown.total_count),
        unique_users_response_rate: rate(sent.unique_persons, shown.unique_persons),
        unique_users_dismissal_rate: rate(dismissed.unique_persons, shown.unique_persons),
      },
      ...(survey
        ? { survey_id: survey.id, start_date: survey.start_date ? new Date(survey.start_date).toISOString() : null, end_date: survey.end_date ? new Date(survey.end_date).toISOString() : null }
        : {}),
    }
  }
}
