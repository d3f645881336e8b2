// Surveys: the project's surveys ("Load more"), each with its type, status and number of responses; "New survey".
import { api, projectPath } from '../lib/api'
import { ErrorNote, Link, Page, time, useAsync } from '../lib/ui'
import { ListBody, LoadMore, Table, usePages } from '../lib/lists'
import { useSession } from '../lib/session'
import { responseCounts, responseCountsNode } from './results'
import { STATUS_TEXT, surveyStatus, TYPE_TEXT, type Survey } from './types'

export function statusText(survey: Survey): string {
  const status = STATUS_TEXT[surveyStatus(survey)]
  return survey.archived ? `${status}, archived` : status
}

export function SurveyList() {
  const { projectId } = useSession()
  const path = projectPath(projectId, 'surveys/?limit=100')
  const surveys = usePages<Survey>(path, (s) => s.id, [path])
  // the `survey sent` events of every survey, counted in one query for the whole list
  const responses = useAsync(
    (signal) => api<{ results: [unknown, unknown][] }>(projectPath(projectId, 'query/'), { json: { query: responseCountsNode() }, signal }).then(responseCounts),
    [projectId],
  )
  const counts = responses.data ?? {}
  return (
    <Page
      title="Surveys"
      actions={
        <Link to="/surveys/new" class="button primary">
          New survey
        </Link>
      }
    >
      <ErrorNote error={surveys.error} />
      <ListBody state={surveys} count={surveys.items.length} what="surveys" empty="No surveys yet.">
        <Table caption="Surveys" columns={['Name', 'Type', 'Status', 'Responses', 'Created']}>
          {surveys.items.map((s) => (
            <tr key={s.id}>
              <td>
                <Link to={`/surveys/${encodeURIComponent(s.id)}`}>{s.name}</Link>
              </td>
              <td>{TYPE_TEXT[s.type] ?? s.type}</td>
              <td>{statusText(s)}</td>
              <td>{typeof counts[s.id] === 'number' ? counts[s.id] : '—'}</td>
              <td>{time(s.created_at)}</td>
            </tr>
          ))}
        </Table>
      </ListBody>
      <LoadMore pages={surveys} what="surveys" />
    </Page>
  )
}
