import { api, projectPath } from '../lib/api'
import { ErrorNote, Link, Loading, Page, useAsync } from '../lib/ui'
import { useSession } from '../lib/session'

export interface Cohort {
  id: number
  name: string
  description?: string
  is_static: boolean
  count: number | null
  filters: { properties?: { type?: string; values?: unknown[] } }
  created_at?: string | null
}

export function CohortList() {
  const { projectId } = useSession()
  const cohorts = useAsync((signal) => api<{ results: Cohort[] }>(projectPath(projectId, 'cohorts/?limit=500'), { signal }), [projectId])
  const rows = cohorts.data?.results ?? []
  return (
    <Page
      title="Cohorts"
      actions={
        <Link to="/cohorts/new" class="button primary">
          New cohort
        </Link>
      }
    >
      <ErrorNote error={cohorts.error} />
      {cohorts.loading && !cohorts.data ? <Loading what="cohorts" /> : null}
      {cohorts.data && rows.length === 0 ? <p class="muted">No cohorts yet.</p> : null}
      {rows.length > 0 ? (
        <div class="scroll">
          <table>
            <caption class="sr-only">Cohorts</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Persons</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.id}>
                  <td>
                    <Link to={`/cohorts/${c.id}`}>{c.name || `Cohort ${c.id}`}</Link>
                  </td>
                  <td>{c.is_static ? 'Static' : 'Dynamic'}</td>
                  <td>{c.count ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </Page>
  )
}
