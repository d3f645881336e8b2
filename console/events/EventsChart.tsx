// "Events per hour" over the last 24 hours, from the query API (HogQL), refreshed every minute.
import { api, ApiFailure, projectPath } from '../lib/api'
import { BarChart, ErrorNote, useAsync, useInterval, type BarPoint } from '../lib/ui'

const HOUR = 3600_000
const QUERY =
  'SELECT toStartOfHour(timestamp) AS hour, count() AS events FROM events WHERE timestamp > now() - INTERVAL 24 HOUR GROUP BY hour ORDER BY hour'

/** 24 hourly buckets ending with the current hour; hours without events are 0. */
export function hourlyPoints(rows: [string, number][], now = Date.now()): BarPoint[] {
  const counts = new Map<number, number>()
  for (const [hour, count] of rows) counts.set(Math.floor(new Date(hour).getTime() / HOUR), Number(count))
  const last = Math.floor(now / HOUR)
  const points: BarPoint[] = []
  for (let h = last - 23; h <= last; h++) {
    points.push({ label: new Date(h * HOUR).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }), value: counts.get(h) ?? 0 })
  }
  return points
}

export function EventsChart(props: { projectId: number }) {
  const result = useAsync(
    (signal) => api<{ results: [string, number][] }>(projectPath(props.projectId, 'query/'), { json: { query: { kind: 'HogQLQuery', query: QUERY } }, signal }),
    [props.projectId],
  )
  useInterval(result.reload, 60_000)
  if (result.error) {
    const missing = result.error instanceof ApiFailure && result.error.status === 404
    return (
      <div class="chart-error">
        <h2>Events per hour</h2>
        {missing ? (
          <p class="error" role="alert">
            The query API is not available on this server, so the chart cannot be drawn.
          </p>
        ) : (
          <ErrorNote error={result.error} />
        )}
      </div>
    )
  }
  return (
    <div>
      <h2>Events per hour</h2>
      <BarChart name="Events per hour" points={hourlyPoints(result.data?.results ?? [])} unit="events" />
    </div>
  )
}
