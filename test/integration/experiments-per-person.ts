// The way experiment results were counted before exposed persons were counted in the store: every exposed person
// read, one row each, then joined with every metric event of the window in TypeScript. Kept here as the reference
// the store's counts must equal (experiments.contract.ts, experiments.chdb.test.ts).
import { exposuresFrom, hogqlTime, metricEvents, metricRowsQuery, MetricTally, type Exposure, type Sample, type Window } from '../../src/experiments/counting'
import type { VariantCounts } from '../../src/experiments/stats/methods'
import type { Metric } from '../../src/experiments/validation'
import { str } from '../../src/lib/hogql-text'
import type { QueryService } from '../../src/query/service'

const PAGE = 50_000

/** The exposures read of before: one row per exposed person, in person_id order. */
function everyExposureQuery(w: Window, limit: number, offset: number): string {
  const where = [
    `event = '$feature_flag_called'`,
    `properties.$feature_flag = ${str(w.flagKey)}`,
    `toString(properties.$feature_flag_response) IN (${w.variants.map(str).join(', ')})`,
    'person_id IS NOT NULL',
    `timestamp >= ${hogqlTime(Math.floor(w.from / 1000) * 1000)} AND timestamp < ${hogqlTime(Math.ceil(w.to / 1000) * 1000)}`,
  ].join(' AND ')
  return `SELECT person_id, min(timestamp), count(DISTINCT toString(properties.$feature_flag_response)),
  min(concat(toString(timestamp), '|', toString(properties.$feature_flag_response)))
FROM events WHERE ${where} GROUP BY person_id ORDER BY person_id LIMIT ${limit} OFFSET ${offset}`
}

/** Whether a person is in a sample, decided here from the id itself (the store decides it in SQL). */
export const inSampleHere = (person: string, sample: Sample | null) => !sample || parseInt(person.slice(28, 36), 16) < sample.threshold

/**
 * The counts as the per-person computation made them (optionally of a sample's persons only, chosen here in
 * TypeScript): exposures of every person, metric events of every person, the join and the sums here.
 */
export async function perPersonCounts(
  query: QueryService,
  teamId: number,
  window: Window,
  metric: Metric,
  handling: 'exclude' | 'first_seen',
  sample: Sample | null = null,
): Promise<{ counts: VariantCounts[]; excluded: number }> {
  const rows: unknown[][] = []
  for (let offset = 0; ; ) {
    const page = await query.run(teamId, everyExposureQuery(window, PAGE, offset))
    rows.push(...page.results)
    offset += page.results.length
    if (!page.hasMore || page.results.length === 0) break
  }
  const exposures = new Map<string, Exposure>()
  const { excluded } = exposuresFrom(rows.filter((r) => inSampleHere(String(r[0]), sample)), handling, exposures)
  const tally = new MetricTally(metric, exposures)
  for (let offset = 0; ; ) {
    const page = await query.run(teamId, metricRowsQuery(metric, metricEvents(metric), window, null, PAGE, offset))
    tally.add(page.results)
    offset += page.results.length
    if (!page.hasMore || page.results.length === 0) break
  }
  return { counts: tally.counts(window.variants), excluded }
}
