// "Web analytics": the site's five figures against the previous period (WebOverviewQuery), visitors per day, and
// the top pages, referrers, devices and browsers (WebStatsTableQuery), over a date range, in the project's timezone.
import { useEffect, useState } from 'preact/hooks'
import { api, projectPath } from '../lib/api'
import { ErrorNote, Field, Loading, Options, Page, useAsync, valueOf } from '../lib/ui'
import { useSession } from '../lib/session'
import { DATE_RANGES } from '../insights/query'
import { TrendChart } from '../insights/Charts'
import { trendLines } from '../insights/chart-data'
import { overviewFigures, roundText, statsRows } from './web-data'

interface Answer {
  results: unknown
  columns?: unknown
  timezone?: string
}

/** One query to the query API, sent again when the range or the comparison changes. */
function useQuery(node: Record<string, unknown>) {
  const { projectId } = useSession()
  const text = JSON.stringify(node)
  return useAsync((signal) => api<Answer>(projectPath(projectId, 'query/'), { json: { query: JSON.parse(text) }, signal }), [projectId, text])
}

function Figures(props: { dateFrom: string; compare: boolean; onTimezone: (tz: string) => void }) {
  const overview = useQuery({ kind: 'WebOverviewQuery', dateRange: { date_from: props.dateFrom }, compareFilter: { compare: props.compare }, properties: [] })
  const tz = overview.data?.timezone
  useEffect(() => {
    if (tz) props.onTimezone(tz)
  }, [tz])
  return (
    <>
      <ErrorNote error={overview.error} />
      {!overview.data && overview.loading ? <Loading what="the figures" /> : null}
      {overview.data ? (
        <div class="figures web-figures" aria-busy={overview.loading}>
          {overviewFigures(overview.data.results).map((f) => (
            <figure key={f.name} aria-label={f.name} class="figure">
              <figcaption>{f.name}</figcaption>
              <p class="figure-value">{f.value}</p>
              {f.change !== null ? <p class={f.good === null ? 'muted small' : f.good ? 'ok small' : 'error small'}>{f.change}</p> : null}
            </figure>
          ))}
        </div>
      ) : null}
    </>
  )
}

function VisitorsChart(props: { dateFrom: string }) {
  const interval = props.dateFrom === '-24h' ? 'hour' : 'day'
  const trend = useQuery({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'dau' }], interval, dateRange: { date_from: props.dateFrom } })
  return (
    <>
      <ErrorNote error={trend.error} />
      {trend.data ? <TrendChart name="Visitors per day" partialLast lines={trendLines(trend.data.results).map((l) => ({ ...l, label: 'Visitors' }))} /> : null}
    </>
  )
}

/** A top-N table of one breakdown: its value, visitors, views and (pages) the bounce rate of the sessions entering there. */
function StatsTable(props: { title: string; column: string; breakdownBy: string; dateFrom: string; bounce?: boolean }) {
  const stats = useQuery({ kind: 'WebStatsTableQuery', breakdownBy: props.breakdownBy, includeBounceRate: props.bounce === true, dateRange: { date_from: props.dateFrom }, limit: 10, properties: [] })
  const rows = statsRows(stats.data)
  return (
    <section class="web-table" aria-label={`${props.title} section`}>
      <h2>{props.title}</h2>
      <ErrorNote error={stats.error} />
      {!stats.data && stats.loading ? <Loading what={props.title.toLowerCase()} /> : null}
      {stats.data && rows.length === 0 ? <p class="muted">Nothing in this range.</p> : null}
      {rows.length ? (
        <div class="scroll">
          <table aria-label={props.title}>
            <thead>
              <tr>
                <th scope="col">{props.column}</th>
                <th scope="col">Visitors</th>
                <th scope="col">Views</th>
                {props.bounce ? <th scope="col">Bounce rate</th> : null}
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i}>
                  <th scope="row" class="mono wrap">
                    {r.value}
                  </th>
                  <td>{r.visitors}</td>
                  <td>{r.views}</td>
                  {props.bounce ? <td>{r.bounceRate === null ? '—' : `${roundText(r.bounceRate, 1)}%`}</td> : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  )
}

export function WebAnalytics() {
  const [dateFrom, setDateFrom] = useState('-7d')
  const [compare, setCompare] = useState(true)
  const [timezone, setTimezone] = useState<string | null>(null)
  return (
    <Page title="Web analytics">
      <div class="filters">
        <Field label="Date range">
          <select value={dateFrom} onChange={(e) => setDateFrom(valueOf(e))}>
            <Options choices={DATE_RANGES} />
          </select>
        </Field>
        <label class="check">
          <input type="checkbox" checked={compare} onChange={(e) => setCompare(e.currentTarget.checked)} />
          Compare to previous period
        </label>
        {/* the API buckets and ranges in the project's timezone: say which, since it may not be the reader's */}
        <p class="muted small" role="note">
          {timezone ? `Times in ${timezone} (the project's timezone)` : ''}
        </p>
      </div>
      <Figures dateFrom={dateFrom} compare={compare} onTimezone={(tz) => tz !== timezone && setTimezone(tz)} />
      <VisitorsChart dateFrom={dateFrom} />
      <div class="web-tables">
        <StatsTable title="Pages" column="Page" breakdownBy="Page" dateFrom={dateFrom} bounce />
        <StatsTable title="Entry pages" column="Entry page" breakdownBy="InitialPage" dateFrom={dateFrom} bounce />
        <StatsTable title="Referrers" column="Referring domain" breakdownBy="InitialReferringDomain" dateFrom={dateFrom} />
        <StatsTable title="Devices" column="Device type" breakdownBy="DeviceType" dateFrom={dateFrom} />
        <StatsTable title="Browsers" column="Browser" breakdownBy="Browser" dateFrom={dateFrom} />
        <StatsTable title="Countries" column="Country" breakdownBy="Country" dateFrom={dateFrom} />
      </div>
    </Page>
  )
}
