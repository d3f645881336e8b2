// Dashboards: the project's dashboards ("Load more"), and "New dashboard" (a name, then its page).
import { useState } from 'preact/hooks'
import { api, projectPath } from '../lib/api'
import { ErrorNote, Field, Link, Page, time, valueOf } from '../lib/ui'
import { useAction } from '../lib/forms'
import { ListBody, LoadMore, Table, usePages } from '../lib/lists'
import { navigate } from '../lib/router'
import { useSession } from '../lib/session'
import type { Dashboard } from './types'

function NewDashboard(props: { onCancel: () => void }) {
  const { projectId } = useSession()
  const [name, setName] = useState('')
  const action = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    action.run(async () => {
      const created = await api<Dashboard>(projectPath(projectId, 'dashboards/'), { json: { name: name.trim() } })
      navigate(`/dashboards/${created.id}`)
    })
  }
  return (
    <form class="row" onSubmit={submit} aria-label="New dashboard">
      <Field label="Name">
        <input required maxLength={400} value={name} onInput={(e) => setName(valueOf(e))} />
      </Field>
      <button type="submit" class="primary" disabled={action.busy || !name.trim()}>
        Create dashboard
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
      <ErrorNote error={action.error} />
    </form>
  )
}

export function DashboardList() {
  const { projectId } = useSession()
  const path = projectPath(projectId, 'dashboards/?limit=100')
  const dashboards = usePages<Dashboard>(path, (d) => d.id, [path])
  const [creating, setCreating] = useState(false)
  return (
    <Page
      title="Dashboards"
      actions={
        creating ? null : (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New dashboard
          </button>
        )
      }
    >
      {creating ? <NewDashboard onCancel={() => setCreating(false)} /> : null}
      <ErrorNote error={dashboards.error} />
      <ListBody state={dashboards} count={dashboards.items.length} what="dashboards" empty="No dashboards yet.">
        <Table caption="Dashboards" columns={['Name', 'Pinned', 'Created']}>
          {dashboards.items.map((d) => (
            <tr key={d.id}>
              <td>
                <Link to={`/dashboards/${d.id}`}>{d.name || `Dashboard ${d.id}`}</Link>
              </td>
              <td>{d.pinned ? 'yes' : ''}</td>
              <td>{time(d.created_at)}</td>
            </tr>
          ))}
        </Table>
      </ListBody>
      <LoadMore pages={dashboards} what="dashboards" />
    </Page>
  )
}
