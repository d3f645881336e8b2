// "Events per hour" over the last 24 hours, from the query API (HogQL), refreshed every minute.
import { api, ApiFailure, projectPath } from '../lib/api'
import { BarChart, ErrorNote, useAsync, useInterval } from '../lib/ui'
import { hourlyPoints } from './hours'

const QUERY =
  'SELECT toStartOfHour(timestamp) AS hour, count() AS events FROM events WHERE timestamp > now() - INTERVAL 24 HOUR GROUP BY hour ORDER BY hour'

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
