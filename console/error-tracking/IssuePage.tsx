// An issue: its name, description, status and figures; "Resolve", "Suppress" ("Reopen" when it is not active); the
// stack of its latest exception (frames innermost first, in-app ones marked); its events a page at a time.
import { useState } from 'preact/hooks'
import { api, projectPath } from '../lib/api'
import { ErrorNote, Link, Loading, Page, time, useAsync } from '../lib/ui'
import { useAction } from '../lib/forms'
import { Table } from '../lib/lists'
import { useSession } from '../lib/session'
import { EVENTS_PAGE, eventsNode, EXCEPTION_PROPERTIES, latestNode } from './queries'
import { exceptionsOf, frameWhere, issueOf, STATUS_TEXT, type ExceptionEntry } from './issues'

interface EventsAnswer {
  results: unknown[][]
  hasMore?: boolean
}

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

function LatestStack(props: { issueId: string; fresh: number }) {
  const { projectId } = useSession()
  const latest = useAsync(
    (signal) => api<EventsAnswer>(projectPath(projectId, 'query/'), { json: { query: latestNode(props.issueId), refresh: 'force_blocking' }, signal }),
    [projectId, props.issueId, props.fresh],
  )
  if (!latest.data) return latest.error ? <ErrorNote error={latest.error} /> : <Loading what="the stack trace" />
  const row = latest.data.results[0]
  if (!row) return <p class="muted">No event of this issue in the store.</p>
  const properties = Object.fromEntries(EXCEPTION_PROPERTIES.map((name, i) => [name, row[i] ?? undefined]))
  const { exceptions, framesLeftOut } = exceptionsOf(properties)
  return (
    <>
      <p class="muted small">{`From the latest event, ${time(typeof row[EXCEPTION_PROPERTIES.length] === 'string' ? (row[EXCEPTION_PROPERTIES.length] as string) : null)}; where it was thrown first.`}</p>
      {exceptions.length === 0 ? <p class="muted">The event holds no exception list.</p> : exceptions.map((e, i) => <Stack key={i} exception={e} index={i} />)}
      {framesLeftOut ? <p class="muted small">{`${framesLeftOut} frames left out.`}</p> : null}
    </>
  )
}

function IssueEvents(props: { issueId: string; fresh: number }) {
  const { projectId } = useSession()
  const [offset, setOffset] = useState(0)
  const page = useAsync(
    (signal) => api<EventsAnswer>(projectPath(projectId, 'query/'), { json: { query: eventsNode(props.issueId, offset), refresh: 'force_blocking' }, signal }),
    [projectId, props.issueId, offset, props.fresh],
  )
  const rows = page.data?.results ?? []
  return (
    <>
      <ErrorNote error={page.error} />
      {!page.data && page.loading ? <Loading what="the events" /> : null}
      {page.data && rows.length === 0 ? <p class="muted">No events.</p> : null}
      {rows.length ? (
        <Table caption="Events of this issue" columns={['Time', 'Person', 'URL']}>
          {rows.map((row, i) => {
            const distinctId = String(row[1] ?? '')
            return (
              <tr key={`${offset}-${i}`}>
                <td>{time(typeof row[0] === 'string' ? row[0] : null)}</td>
                <td class="mono small">
                  <Link to={`/persons/${encodeURIComponent(distinctId)}`}>{distinctId}</Link>
                </td>
                <td class="mono small wrap">{typeof row[2] === 'string' ? row[2] : ''}</td>
              </tr>
            )
          })}
        </Table>
      ) : null}
      <div class="row">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - EVENTS_PAGE))}>
          Newer events
        </button>
        <button type="button" disabled={!page.data?.hasMore} onClick={() => setOffset(offset + EVENTS_PAGE)}>
          Older events
        </button>
      </div>
    </>
  )
}

export function IssuePage(props: { id: string }) {
  const { projectId } = useSession()
  const path = projectPath(projectId, `error_tracking/issues/${encodeURIComponent(props.id)}/`)
  const answer = useAsync((signal) => api<Record<string, any>>(path, { signal }), [path])
  const action = useAction()
  const [fresh, setFresh] = useState(0)
  if (!answer.data) return <Page title="Issue">{answer.error ? <ErrorNote error={answer.error} /> : <Loading what="the issue" />}</Page>
  const issue = issueOf(answer.data)
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
        <Link to="/error-tracking">All issues</Link>
      </p>
      {issue.description ? <p class="wrap">{issue.description}</p> : null}
      <ErrorNote error={action.error} />
      <dl class="figures">
        <div>
          <dt>Status</dt>
          <dd>
            <span role="status">{STATUS_TEXT[issue.status] ?? issue.status}</span>
          </dd>
        </div>
        <div>
          <dt>Occurrences</dt>
          <dd>{issue.occurrences}</dd>
        </div>
        <div>
          <dt>Users</dt>
          <dd>{issue.users}</dd>
        </div>
        <div>
          <dt>First seen</dt>
          <dd>{time(issue.first_seen)}</dd>
        </div>
        <div>
          <dt>Last seen</dt>
          <dd>{time(issue.last_seen)}</dd>
        </div>
      </dl>
      <div class="page-head">
        <h2>Stack trace</h2>
        <button type="button" onClick={() => setFresh(fresh + 1)}>
          Reload events
        </button>
      </div>
      <LatestStack issueId={issue.id} fresh={fresh} />
      <h2>Events</h2>
      <IssueEvents issueId={issue.id} fresh={fresh} />
    </Page>
  )
}
