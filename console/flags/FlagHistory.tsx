// A flag's change history: who changed which fields, from what to what (the flag's activity API).
import { api, ApiFailure, projectPath } from '../lib/api'
import { ErrorNote, Loading, time, useAsync } from '../lib/ui'
import { changeLines, type ChangeLine } from './history'
import type { Flag } from './types'

interface Change {
  id: string
  activity: 'created' | 'updated' | 'deleted' | 'restored'
  user: { email: string } | null
  detail: { version: number; changes: { field: string; before: unknown; after: unknown }[] }
  created_at: string
}

/** One line of a change: "Condition set 1: 20% of all users → 50% of all users", "… added: …", "… removed (was …)". */
function ChangeText(props: { line: ChangeLine }) {
  const { label, before, after } = props.line
  if (before === null) return <>{label} added: <span class="mono">{after}</span></>
  if (after === null) return <>{label} removed (was <span class="mono">{before}</span>)</>
  return (
    <>
      {label}: <span class="mono">{before}</span> → <span class="mono">{after}</span>
    </>
  )
}

export function FlagHistory(props: { projectId: number; flag: Flag; version: number | undefined }) {
  const history = useAsync(
    (signal) => api<{ results: Change[] }>(projectPath(props.projectId, `feature_flags/${props.flag.id}/activity/?limit=50`), { signal }),
    [props.projectId, props.flag.id, props.version],
  )
  const missing = history.error instanceof ApiFailure && history.error.status === 404
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">Change history</h2>
      {history.loading && !history.data ? <Loading what="the history" /> : null}
      {history.error && !missing ? <ErrorNote error={history.error} /> : null}
      {missing ? (
        // a server without the history API: what the flag itself says
        <ul class="history">
          <li>
            Created {time(props.flag.created_at)}
            {props.flag.created_by ? ` by ${props.flag.created_by.email}` : ''}
          </li>
          {props.flag.updated_at ? <li>Last changed {time(props.flag.updated_at)}{props.flag.last_modified_by ? ` by ${props.flag.last_modified_by.email}` : ''}</li> : null}
        </ul>
      ) : null}
      {history.data ? (
        <ol class="history">
          {history.data.results.map((entry) => (
            <li key={entry.id}>
              <strong>{entry.activity === 'created' ? 'Created' : entry.activity === 'deleted' ? 'Deleted' : entry.activity === 'restored' ? 'Restored' : 'Changed'}</strong>{' '}
              <span class="muted">
                {time(entry.created_at)}
                {entry.user ? ` by ${entry.user.email}` : ''} · version {entry.detail.version}
              </span>
              {entry.activity === 'updated' ? (
                <ul>
                  {entry.detail.changes.flatMap(changeLines).map((line) => (
                    <li key={line.label}>
                      <ChangeText line={line} />
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  )
}
