// "Events per hour" over the last 24 hours, from the query API (HogQL), narrowed by the page's filters, refreshed
// every minute.
import { api, ApiFailure, projectPath } from '../lib/api'
import { BarChart, ErrorNote, useAsync, useInterval } from '../lib/ui'
import { hourlyPoints, hourlyQuery } from './hours'

export function EventsChart(props: { projectId: number; eventName: string; distinctId: string; timezone: string | null }) {
  const query = hourlyQuery({ eventName: props.eventName, distinctId: props.distinctId })
  const result = useAsync(
    (signal) => api<{ results: [string, number][] }>(projectPath(props.projectId, 'query/'), { json: { query: { kind: 'HogQLQuery', query } }, signal }),
    [props.projectId, query],
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
      {props.eventName || props.distinctId ? (
        <p class="muted small">
          Only {props.eventName ? `${props.eventName} events` : 'events'}
          {props.distinctId ? ` of ${props.distinctId}` : ''}.
        </p>
      ) : null}
      <BarChart name="Events per hour" points={hourlyPoints(result.data?.results ?? [], Date.now(), props.timezone ?? undefined)} unit="events" />
    </div>
  )
}
