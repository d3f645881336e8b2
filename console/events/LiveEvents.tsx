// The newest events, refreshed every two seconds; filters by event name and distinct id; a row opens its properties.
import { useState } from 'preact/hooks'
import { projectPath, query } from '../lib/api'
import { ErrorNote, Field, Link, Loading, Page, PropertiesTable, useInterval, valueOf } from '../lib/ui'
import { timeIn, useProjectTimezone } from '../lib/timezone'
import { LoadMore, Table, usePages } from '../lib/lists'
import { useSession } from '../lib/session'
import { EventsChart } from './EventsChart'

export interface EventRow {
  id: string
  uuid: string
  event: string
  distinct_id: string
  properties: Record<string, unknown>
  timestamp: string
}

const REFRESH_MS = 2000

export function LiveEvents() {
  const { projectId } = useSession()
  const [eventName, setEventName] = useState('')
  const [distinctId, setDistinctId] = useState('')
  const [open, setOpen] = useState<string | null>(null)
  const [paused, setPaused] = useState(false)
  const path = projectPath(projectId, `events/${query({ event: eventName.trim(), distinct_id: distinctId.trim(), limit: 50 })}`)
  // the newest page is read again every REFRESH_MS; older pages loaded with "Load more" stay below it
  const events = usePages<EventRow>(path, (e) => e.uuid, [path])
  useInterval(() => {
    if (!paused && !events.loading) events.reload()
  }, REFRESH_MS)
  const timezone = useProjectTimezone()
  const rows = [...events.items].sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0))
  return (
    <Page title="Live events">
      <EventsChart projectId={projectId} eventName={eventName.trim()} distinctId={distinctId.trim()} timezone={timezone} />
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <Field label="Event name">
          <input type="search" value={eventName} onInput={(e) => setEventName(valueOf(e))} />
        </Field>
        <Field label="Distinct ID">
          <input type="search" value={distinctId} onInput={(e) => setDistinctId(valueOf(e))} />
        </Field>
        <label class="check">
          <input type="checkbox" checked={paused} onChange={(e) => setPaused(e.currentTarget.checked)} /> Pause
        </label>
      </form>
      <p class="muted small" aria-live="polite">
        {paused ? 'Paused.' : `Refreshing every ${REFRESH_MS / 1000} s.`}
      </p>
      {timezone ? <p class="muted small">{`Times in ${timezone} (the project's timezone, set in Settings)`}</p> : null}
      <ErrorNote error={events.error} />
      {events.loading && !events.error ? <Loading what="events" /> : null}
      {events.data && rows.length === 0 ? <p class="muted">No events yet{eventName || distinctId ? ' matching these filters' : ''}.</p> : null}
      {rows.length > 0 ? (
        <Table caption="Newest events" columns={['Event', 'Distinct ID', 'Time']} class="events">
          {rows.map((row) => (
            <EventLine key={row.uuid} row={row} timezone={timezone} open={open === row.uuid} onToggle={() => setOpen(open === row.uuid ? null : row.uuid)} />
          ))}
        </Table>
      ) : null}
      <LoadMore pages={events} what="events" />
    </Page>
  )
}

function EventLine(props: { row: EventRow; timezone: string | null; open: boolean; onToggle: () => void }) {
  const { row } = props
  return (
    <>
      <tr class={props.open ? 'open' : ''}>
        <td>
          <button type="button" class="link" aria-expanded={props.open} onClick={props.onToggle}>
            {row.event}
          </button>
        </td>
        <td class="mono">
          <Link to={`/persons/${encodeURIComponent(row.distinct_id)}`}>{row.distinct_id}</Link>
        </td>
        <td>{timeIn(row.timestamp, props.timezone)}</td>
      </tr>
      {props.open ? (
        <tr class="details">
          <td colSpan={3}>
            {typeof row.properties?.$session_id === 'string' && row.properties.$session_id ? (
              <p>
                <Link to={`/replay/${encodeURIComponent(row.properties.$session_id)}`}>Watch the recording of this session</Link>
              </p>
            ) : null}
            <PropertiesTable properties={row.properties} caption={`Properties of ${row.event}`} />
          </td>
        </tr>
      ) : null}
    </>
  )
}
