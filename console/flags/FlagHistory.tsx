// A flag's change history: who changed which fields, from what to what (the flag's activity API).
import { api, ApiFailure, projectPath } from '../lib/api'
import { ErrorNote, Loading, time, useAsync, valueText } from '../lib/ui'
import type { Flag } from './types'

interface Change {
  id: string
  activity: 'created' | 'updated' | 'deleted' | 'restored'
  user: { email: string } | null
  detail: { version: number; changes: { field: string; before: unknown; after: unknown }[] }
  created_at: string
}

const FIELD_NAMES: Record<string, string> = {
  key: 'key',
  name: 'name',
  filters: 'release conditions',
  rollout_percentage: 'rollout percentage',
  active: 'enabled',
  deleted: 'deleted',
  ensure_experience_continuity: 'experience continuity',
}

function short(value: unknown): string {
  const text = valueText(value)
  return text.length > 120 ? `${text.slice(0, 117)}…` : text
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
                  {entry.detail.changes.map((c) => (
                    <li key={c.field}>
                      {FIELD_NAMES[c.field] ?? c.field}: <span class="mono">{short(c.before)}</span> → <span class="mono">{short(c.after)}</span>
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
