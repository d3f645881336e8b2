// "New survey" and "Edit survey": name, type, the questions (open text, rating with its scale, single or multiple
// choice with their choices, a link), and optional targeting: a URL the page must contain, a linked feature flag. A
// new survey is saved as a draft; an edit keeps each question's id (answers are counted by it) and what the form
// does not show (edit.ts).
import { useState } from 'preact/hooks'
import { api, projectPath, query } from '../lib/api'
import { Field, Options, Page, useAsync, valueOf } from '../lib/ui'
import { SaveFooter, useAction } from '../lib/forms'
import { navigate } from '../lib/router'
import { useSession } from '../lib/session'
import type { Flag } from '../flags/types'
import { editBody } from './edit'
import { emptyQuestion, MAX_QUESTIONS, surveyStatus, QUESTION_TYPES, RATING_SCALES, surveyBody, type QuestionForm, type QuestionType, type Survey, type SurveyForm as Form } from './types'

function QuestionFields(props: { index: number; form: QuestionForm; onChange: (patch: Partial<QuestionForm>) => void; onRemove: (() => void) | null }) {
  const { form, index, onChange } = props
  return (
    <fieldset role="group" aria-label={`Question ${index + 1}`}>
      <legend>{`Question ${index + 1}`}</legend>
      <div class="filters">
        <Field label="Question">
          <input required maxLength={1000} value={form.question} onInput={(e) => onChange({ question: valueOf(e) })} />
        </Field>
        <Field label="Question type">
          <select value={form.type} onChange={(e) => onChange({ type: valueOf(e) as QuestionType })}>
            <Options choices={QUESTION_TYPES} />
          </select>
        </Field>
        {form.type === 'rating' ? (
          <>
            <Field label="Scale" hint="10 is 0 to 10 (NPS); the others start at 1">
              <select value={form.scale} onChange={(e) => onChange({ scale: valueOf(e) })}>
                <Options choices={RATING_SCALES.map((n) => [String(n), `1–${n}`.replace('1–10', '0–10')] as const)} />
              </select>
            </Field>
            <Field label="Low end label">
              <input maxLength={200} value={form.lowerBoundLabel} onInput={(e) => onChange({ lowerBoundLabel: valueOf(e) })} />
            </Field>
            <Field label="High end label">
              <input maxLength={200} value={form.upperBoundLabel} onInput={(e) => onChange({ upperBoundLabel: valueOf(e) })} />
            </Field>
          </>
        ) : null}
        {form.type === 'single_choice' || form.type === 'multiple_choice' ? (
          <Field label="Choices" hint="one a line, at least two">
            <textarea required rows={4} maxLength={4000} value={form.choices} onInput={(e) => onChange({ choices: valueOf(e) })} />
          </Field>
        ) : null}
        {form.type === 'link' ? (
          <>
            <Field label="Link URL" hint="https:// or mailto:">
              <input required type="url" maxLength={2000} value={form.link} onInput={(e) => onChange({ link: valueOf(e) })} />
            </Field>
            <Field label="Button text">
              <input maxLength={100} value={form.buttonText} onInput={(e) => onChange({ buttonText: valueOf(e) })} />
            </Field>
          </>
        ) : null}
      </div>
      {props.onRemove ? (
        <button type="button" onClick={props.onRemove}>
          {`Remove question ${index + 1}`}
        </button>
      ) : null}
    </fieldset>
  )
}

const NEW_SURVEY: Form = { name: '', type: 'popover', questions: [emptyQuestion()], urlContains: '', linkedFlagId: '' }

/** `editing`: the stored survey and its form (edit.ts formOf); none for a new survey. */
export function SurveyForm(props: { editing?: { survey: Survey; form: Form } }) {
  const { projectId } = useSession()
  const editing = props.editing
  const [form, setForm] = useState<Form>(editing?.form ?? NEW_SURVEY)
  const action = useAction()
  // the flags a survey can be linked to (its own targeting flags are not among the choices)
  const flags = useAsync((signal) => api<{ results: Flag[] }>(projectPath(projectId, `feature_flags/${query({ limit: 200 })}`), { signal }), [projectId])
  const flagChoices = (flags.data?.results ?? []).filter((f) => !f.key.startsWith('survey-targeting-')).map((f) => [String(f.id), f.key] as const)
  const set = (patch: Partial<Form>) => setForm({ ...form, ...patch })
  const setQuestion = (index: number, patch: Partial<QuestionForm>) => set({ questions: form.questions.map((q, i) => (i === index ? { ...q, ...patch } : q)) })
  const submit = (e: Event) => {
    e.preventDefault()
    action.run(async () => {
      const body = editing ? editBody(form, editing.survey) : surveyBody(form)
      if (typeof body === 'string') throw new Error(body)
      const path = editing ? `surveys/${encodeURIComponent(editing.survey.id)}/` : 'surveys/'
      const saved = await api<Survey>(projectPath(projectId, path), { method: editing ? 'PATCH' : 'POST', json: body })
      navigate(`/surveys/${encodeURIComponent(saved.id)}`)
    })
  }
  const matchType = editing?.survey.conditions?.urlMatchType
  const urlHint =
    matchType && matchType !== 'icontains' && form.urlContains === (editing?.survey.conditions?.url ?? '')
      ? `matched as “${matchType}” (set through the API); a new value here is matched as “contains”`
      : 'shown only on pages whose address contains this'
  return (
    <Page title={editing ? `Edit survey ${editing.survey.name}` : 'New survey'}>
      {editing && surveyStatus(editing.survey) === 'running' ? (
        <p class="muted">This survey is running: visitors see the change at their next page load. Answers given so far stay with their questions.</p>
      ) : null}
      <form class="stack" onSubmit={submit} onInput={() => action.reset()}>
        <Field label="Name">
          <input required maxLength={400} value={form.name} onInput={(e) => set({ name: valueOf(e) })} />
        </Field>
        <Field label="Survey type" hint="popover and widget: posthog-js shows them; API: your code asks for them and shows them itself">
          <select value={form.type} onChange={(e) => set({ type: valueOf(e) as Form['type'] })}>
            <Options choices={[['popover', 'Popover'], ['widget', 'Widget'], ['api', 'API']]} />
          </select>
        </Field>
        {form.questions.map((q, i) => (
          <QuestionFields key={i} index={i} form={q} onChange={(patch) => setQuestion(i, patch)} onRemove={form.questions.length > 1 ? () => set({ questions: form.questions.filter((_, j) => j !== i) }) : null} />
        ))}
        <div class="row">
          <button type="button" disabled={form.questions.length >= MAX_QUESTIONS} onClick={() => set({ questions: [...form.questions, emptyQuestion()] })}>
            Add question
          </button>
        </div>
        <fieldset>
          <legend>Targeting (optional)</legend>
          <div class="filters">
            <Field label="URL contains" hint={urlHint}>
              <input maxLength={2000} value={form.urlContains} onInput={(e) => set({ urlContains: valueOf(e) })} />
            </Field>
            <Field label="Linked feature flag" hint="shown only to those the flag is on for">
              <select value={form.linkedFlagId} onChange={(e) => set({ linkedFlagId: valueOf(e) })}>
                <option value="">None</option>
                <Options choices={flagChoices} />
              </select>
            </Field>
          </div>
        </fieldset>
        <SaveFooter action={action} />
      </form>
    </Page>
  )
}
