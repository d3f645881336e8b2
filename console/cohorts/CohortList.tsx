import { projectPath } from '../lib/api'
import { ErrorNote, Link, Page } from '../lib/ui'
import { ListBody, LoadMore, Table, usePages } from '../lib/lists'
import { useSession } from '../lib/session'

export interface Cohort {
  id: number
  name: string
  description?: string
  is_static: boolean
  count: number | null
  /** only in the answer to a CSV upload */
  csv_skipped?: { count: number; ids: string[] }
  filters: { properties?: { type?: string; values?: unknown[] } }
  created_at?: string | null
}

export function CohortList() {
  const { projectId } = useSession()
  const path = projectPath(projectId, 'cohorts/?limit=100')
  const cohorts = usePages<Cohort>(path, (c) => c.id, [path])
  const rows = cohorts.items
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
      <ListBody state={cohorts} count={rows.length} what="cohorts" empty="No cohorts yet.">
        <Table caption="Cohorts" columns={['Name', 'Type', 'Persons']}>
          {rows.map((c) => (
            <tr key={c.id}>
              <td>
                <Link to={`/cohorts/${c.id}`}>{c.name || `Cohort ${c.id}`}</Link>
              </td>
              <td>{c.is_static ? 'Static' : 'Dynamic'}</td>
              <td>{c.count ?? '—'}</td>
            </tr>
          ))}
        </Table>
      </ListBody>
      <LoadMore pages={cohorts} what="cohorts" />
    </Page>
  )
}
