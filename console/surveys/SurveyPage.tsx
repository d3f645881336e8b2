// A survey: its type, status, targeting and questions; "Edit", "Launch" (a draft: PATCH start_date), "Stop" (running:
// PATCH end_date), "Archive"; then its results. /surveys/:id/edit: the form, filled from the stored survey.
import { api, projectPath } from '../lib/api'
import { ConfirmedButton, ErrorNote, Link, Loading, Page, time, useAsync } from '../lib/ui'
import { useAction } from '../lib/forms'
import { Figures } from '../lib/figures'
import { useSession } from '../lib/session'
import { SurveyForm } from './SurveyForm'
import { formOf } from './edit'
import { SurveyResults } from './SurveyResults'
import { statusText } from './SurveyList'
import { QUESTION_TYPES, surveyStatus, TYPE_TEXT, type Survey, type SurveyQuestion } from './types'

const QUESTION_TYPE_TEXT: Record<string, string> = Object.fromEntries(QUESTION_TYPES)

function questionDetail(q: SurveyQuestion): string {
  if (q.type === 'rating') return `scale ${q.scale ?? 10}`
  if (q.type === 'single_choice' || q.type === 'multiple_choice') return (q.choices ?? []).join(' · ')
  if (q.type === 'link') return q.link ?? ''
  return ''
}

/** The stored survey, read for its page and for its edit. */
function useSurvey(id: string) {
  const { projectId } = useSession()
  return useAsync((signal) => api<Survey>(projectPath(projectId, `surveys/${encodeURIComponent(id)}/`), { signal }), [projectId, id])
}

/** The page while the survey is read, or why it could not be. */
function SurveyPending(props: { title: string; error: unknown }) {
  return <Page title={props.title}>{props.error ? <ErrorNote error={props.error} /> : <Loading what="the survey" />}</Page>
}

function SurveyView(props: { id: string }) {
  const { projectId } = useSession()
  const survey = useSurvey(props.id)
  const action = useAction()
  const s = survey.data
  if (!s) return <SurveyPending title="Survey" error={survey.error} />
  const status = surveyStatus(s)
  const write = (json: Record<string, unknown>) =>
    action.run(async () => {
      await api(projectPath(projectId, `surveys/${encodeURIComponent(s.id)}/`), { method: 'PATCH', json })
      survey.reload()
    })
  const url = s.conditions?.url
  return (
    <Page
      title={s.name}
      actions={
        <div class="row">
          {!s.archived ? (
            <Link to={`/surveys/${encodeURIComponent(s.id)}/edit`} class="button">
              Edit
            </Link>
          ) : null}
          {status === 'draft' && !s.archived ? (
            <ConfirmedButton label="Launch" title={`Launch the survey “${s.name}”?`} disabled={action.busy} onConfirm={() => write({ start_date: new Date().toISOString() })}>
              <p>posthog-js starts showing it to the visitors it targets.</p>
            </ConfirmedButton>
          ) : null}
          {status === 'running' ? (
            <ConfirmedButton label="Stop" title={`Stop the survey “${s.name}”?`} disabled={action.busy} onConfirm={() => write({ end_date: new Date().toISOString() })}>
              <p>It is no longer shown; its answers stay.</p>
            </ConfirmedButton>
          ) : null}
          {!s.archived ? (
            <ConfirmedButton label="Archive" name={`Archive survey ${s.name}`} title={`Archive the survey “${s.name}”?`} disabled={action.busy} onConfirm={() => write({ archived: true })}>
              <p>An archived survey is never shown again; its answers stay.</p>
            </ConfirmedButton>
          ) : null}
        </div>
      }
    >
      <p>
        <Link to="/surveys">All surveys</Link>
      </p>
      <ErrorNote error={action.error} />
      <Figures
        items={[
          ['Status', <span role="status">{statusText(s)}</span>],
          ['Type', TYPE_TEXT[s.type] ?? s.type],
          ['Started', time(s.start_date)],
          ['Ended', time(s.end_date)],
          ['URL contains', <span class="mono wrap">{url || 'any page'}</span>],
          ['Linked feature flag', <span class="mono">{s.linked_flag ? <Link to={`/flags/${s.linked_flag.id}`}>{s.linked_flag.key}</Link> : 'none'}</span>],
        ]}
      />
      <h2>Questions</h2>
      <ol>
        {s.questions.map((q, i) => (
          <li key={q.id ?? i} class="wrap">
            {q.question} <span class="muted small">{`(${QUESTION_TYPE_TEXT[q.type] ?? q.type}${questionDetail(q) ? `: ${questionDetail(q)}` : ''})`}</span>
          </li>
        ))}
      </ol>
      {status === 'draft' ? <p class="muted">A draft is shown to nobody: launch it to collect answers.</p> : <SurveyResults survey={s} />}
    </Page>
  )
}

function SurveyEdit(props: { id: string }) {
  const survey = useSurvey(props.id)
  const s = survey.data
  if (!s) return <SurveyPending title="Edit survey" error={survey.error} />
  const form = formOf(s)
  if (typeof form === 'string') {
    return (
      <Page title={`Edit survey ${s.name}`}>
        <p role="alert">{form}</p>
        <p>
          <Link to={`/surveys/${encodeURIComponent(s.id)}`}>Back to the survey</Link>
        </p>
      </Page>
    )
  }
  return <SurveyForm editing={{ survey: s, form }} />
}

export function SurveyPage(props: { id: string | null; edit?: boolean }) {
  if (props.id === null) return <SurveyForm />
  return props.edit ? <SurveyEdit key={`edit-${props.id}`} id={props.id} /> : <SurveyView key={props.id} id={props.id} />
}
