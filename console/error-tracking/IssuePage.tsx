// An issue: its name, description, status and figures over a date range; "Resolve", "Suppress" ("Reopen" when it is
// not active); the stack of its latest exception (frames where it was thrown first, in-app ones marked); its latest
// events (the issue's answer lists them newest first: 25, then up to 100 on "Show more events"); its fingerprints
// when it has several (a merge), each of which can be split off into an issue of its own.
import { useState } from 'preact/hooks'
import { api, projectPath, query } from '../lib/api'
import { ConfirmedButton, ErrorNote, Link, Loading, Page, time, useAsync } from '../lib/ui'
import { useAction } from '../lib/forms'
import { Figures } from '../lib/figures'
import { Table } from '../lib/lists'
import { useSession } from '../lib/session'
import { RangeField } from './IssueList'
import { eventsOf, exceptionsOf, frameWhere, issueOf, rangeOf, STATUS_TEXT, type ExceptionEntry, type IssueEvent } from './issues'

const EVENTS_PAGE = 25
/** the most events the issue's answer lists */
const MAX_EVENTS = 100

function Stack(props: { exception: ExceptionEntry; index: number }) {
  const { exception } = props
  return (
    <section aria-label={`Exception ${props.index + 1}`}>
      <h3 class="wrap">
        {exception.type}
        {exception.value ? `: ${exception.value}` : ''}
      </h3>
      {exception.handled === false ? <p class="muted small">Unhandled.</p> : null}
      {exception.frames.length ? (
        <Table caption={`Stack trace ${props.index + 1}`} columns={['Function', 'File', 'Line', 'Column', 'In app']}>
          {exception.frames.map((f, i) => (
            <tr key={i} class={f.inApp ? 'in-app' : 'library'} title={frameWhere(f)}>
              <td class="mono">{f.fn}</td>
              <td class="mono small wrap">{f.file}</td>
              <td>{f.line ?? ''}</td>
              <td>{f.column ?? ''}</td>
              <td>{f.inApp ? 'In app' : ''}</td>
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">No stack trace.</p>
      )}
    </section>
  )
}

function LatestStack(props: { event: IssueEvent | undefined }) {
  if (!props.event) return <p class="muted">No event of this issue in the range.</p>
  const { exceptions, framesLeftOut } = exceptionsOf(props.event.properties)
  return (
    <>
      <p class="muted small">{`From the latest event, ${time(props.event.timestamp)}; where it was thrown first.`}</p>
      {exceptions.length === 0 ? <p class="muted">The event holds no exception list.</p> : exceptions.map((e, i) => <Stack key={i} exception={e} index={i} />)}
      {framesLeftOut ? <p class="muted small">{`${framesLeftOut} frames left out.`}</p> : null}
    </>
  )
}

/** Short enough to read, whole in its title: fingerprints are SHA-512 hex, or a client's own text. */
const shortFingerprint = (fingerprint: string) => (fingerprint.length > 16 ? `${fingerprint.slice(0, 16)}…` : fingerprint)

function Fingerprints(props: { path: string; fingerprints: string[]; onSplit: (newIssueId: string | null) => void }) {
  const action = useAction()
  const split = (fingerprint: string) =>
    action.run(async () => {
      const answer = await api<{ new_issue_ids: string[] }>(`${props.path}split/`, { json: { fingerprints: [fingerprint] } })
      props.onSplit(answer.new_issue_ids[0] ?? null)
    })
  return (
    <>
      <h2>Fingerprints</h2>
      <p class="muted small">This issue holds the exceptions of several fingerprints (issues merged into it).</p>
      <ErrorNote error={action.error} />
      <Table caption="Fingerprints" columns={['Fingerprint', 'Split off']}>
        {props.fingerprints.map((fingerprint) => (
          <tr key={fingerprint}>
            <td class="mono small" title={fingerprint}>
              {shortFingerprint(fingerprint)}
            </td>
            <td>
              <ConfirmedButton label="Split" name={`Split fingerprint ${shortFingerprint(fingerprint)}`} title="Split this fingerprint into an issue of its own?" disabled={action.busy} onConfirm={() => split(fingerprint)}>
                <p>Its past and future exceptions then count in a new issue, no longer in this one.</p>
              </ConfirmedButton>
            </td>
          </tr>
        ))}
      </Table>
    </>
  )
}

function EventsTable(props: { events: IssueEvent[] }) {
  return (
    <Table caption="Events of this issue" columns={['Time', 'Person', 'URL']}>
      {props.events.map((e) => {
        const url = e.properties.$current_url
        return (
          <tr key={e.uuid}>
            <td>{time(e.timestamp)}</td>
            <td class="mono small">
              <Link to={`/persons/${encodeURIComponent(e.distinct_id)}`}>{e.distinct_id}</Link>
            </td>
            <td class="mono small wrap">{typeof url === 'string' ? url : ''}</td>
          </tr>
        )
      })}
    </Table>
  )
}

export function IssuePage(props: { id: string }) {
  const { projectId } = useSession()
  const [range, setRange] = useState(() => rangeOf(new URLSearchParams(location.search).get('date_from')))
  const [eventsLimit, setEventsLimit] = useState(EVENTS_PAGE)
  const path = projectPath(projectId, `error_tracking/issues/${encodeURIComponent(props.id)}/`)
  const answer = useAsync((signal) => api<Record<string, any>>(`${path}${query({ date_from: range, events_limit: eventsLimit })}`, { signal }), [path, range, eventsLimit])
  const action = useAction()
  // the issue a fingerprint was just split off into (undefined: none this visit)
  const [splitInto, setSplitInto] = useState<string | null | undefined>(undefined)
  if (!answer.data) return <Page title="Issue">{answer.error ? <ErrorNote error={answer.error} /> : <Loading what="the issue" />}</Page>
  const issue = issueOf(answer.data)
  const events = eventsOf(answer.data)
  const fingerprints: string[] = Array.isArray(answer.data.fingerprints) ? answer.data.fingerprints.filter((f: unknown) => typeof f === 'string') : []
  const setStatus = (status: string) =>
    action.run(async () => {
      await api(path, { method: 'PATCH', json: { status } })
      answer.reload()
    })
  return (
    <Page
      title={issue.name}
      actions={
        <div class="row">
          {issue.status !== 'resolved' ? (
            <button type="button" disabled={action.busy} onClick={() => setStatus('resolved')}>
              Resolve
            </button>
          ) : null}
          {issue.status !== 'suppressed' ? (
            <button type="button" disabled={action.busy} onClick={() => setStatus('suppressed')}>
              Suppress
            </button>
          ) : null}
          {issue.status !== 'active' ? (
            <button type="button" disabled={action.busy} onClick={() => setStatus('active')}>
              Reopen
            </button>
          ) : null}
        </div>
      }
    >
      <p>
        <Link to={`/error-tracking${query({ date_from: range === '-7d' ? undefined : range })}`}>All issues</Link>
      </p>
      {issue.description ? <p class="wrap">{issue.description}</p> : null}
      <ErrorNote error={action.error ?? answer.error} />
      <div class="filters">
        <RangeField range={range} onChange={setRange} />
      </div>
      <Figures
        items={[
          ['Status', <span role="status">{STATUS_TEXT[issue.status] ?? issue.status}</span>],
          ['Occurrences', issue.occurrences],
          ['Users', issue.users],
          ['Sessions', issue.sessions],
          ['First seen', time(issue.first_seen)],
          ['Last seen', time(issue.last_seen)],
        ]}
      />
      {splitInto !== undefined ? (
        <p role="status">{splitInto ? <>Split off into <Link to={`/error-tracking/${encodeURIComponent(splitInto)}`}>a new issue</Link>.</> : 'Split off.'}</p>
      ) : null}
      {fingerprints.length > 1 ? (
        <Fingerprints
          path={path}
          fingerprints={fingerprints}
          onSplit={(id) => {
            setSplitInto(id)
            answer.reload()
          }}
        />
      ) : null}
      <h2>Stack trace</h2>
      <LatestStack event={events[0]} />
      <h2>Events</h2>
      {events.length ? <EventsTable events={events} /> : <p class="muted">No events in this range.</p>}
      <div class="row">
        <span class="muted small">{`${events.length} latest events shown`}</span>
        {events.length >= eventsLimit && eventsLimit < MAX_EVENTS ? (
          <button type="button" disabled={answer.loading} onClick={() => setEventsLimit(Math.min(MAX_EVENTS, eventsLimit + EVENTS_PAGE))}>
            Show more events
          </button>
        ) : null}
      </div>
    </Page>
  )
}
