// Experiments: the project's experiments ("Load more"), each with its flag and status; "New experiment".
import { Link, Page, ErrorNote, time } from '../lib/ui'
import { ListBody, LoadMore, Table, usePages } from '../lib/lists'
import { projectPath } from '../lib/api'
import { useSession } from '../lib/session'
import { STATUS_TEXT, type Experiment } from './types'

export function ExperimentList() {
  const { projectId } = useSession()
  const path = projectPath(projectId, 'experiments/?limit=100')
  const experiments = usePages<Experiment>(path, (e) => e.id, [path])
  return (
    <Page
      title="Experiments"
      actions={
        <Link to="/experiments/new" class="button primary">
          New experiment
        </Link>
      }
    >
      <ErrorNote error={experiments.error} />
      <ListBody state={experiments} count={experiments.items.length} what="experiments" empty="No experiments yet.">
        <Table caption="Experiments" columns={['Name', 'Feature flag', 'Status', 'Started', 'Ended']}>
          {experiments.items.map((e) => (
            <tr key={e.id}>
              <td>
                <Link to={`/experiments/${e.id}`}>{e.name}</Link>
              </td>
              <td class="mono">{e.feature_flag_key ?? ''}</td>
              <td>{STATUS_TEXT[e.status] ?? e.status}</td>
              <td>{time(e.start_date)}</td>
              <td>{time(e.end_date)}</td>
            </tr>
          ))}
        </Table>
      </ListBody>
      <LoadMore pages={experiments} what="experiments" />
    </Page>
  )
}
