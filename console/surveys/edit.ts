// Editing a stored survey with the form: the form made from the survey, and the PATCH body made from the form. What
// the form does not show (a question's description or branching, an emoji rating, other display conditions, the
// appearance) is kept as it was, so an edit here never drops what the API or PostHog's own app set.
import { MAX_QUESTIONS, QUESTION_TYPES, questionBody, surveyBody, type QuestionForm, type QuestionType, type Survey, type SurveyForm, type SurveyQuestion } from './types'

const FORM_TYPES = new Set<string>(QUESTION_TYPES.map(([type]) => type))

/** What a question keeps of itself whatever its type becomes. */
const KEPT_ACROSS_TYPES = ['description', 'descriptionContentType', 'optional'] as const

/** The form of a stored survey, or why this form cannot edit it. */
export function formOf(survey: Survey): SurveyForm | string {
  if (survey.questions.length > MAX_QUESTIONS) return `This survey has more than ${MAX_QUESTIONS} questions; edit it through the API.`
  const odd = survey.questions.find((q) => !FORM_TYPES.has(q.type))
  if (odd) return `A question of type “${odd.type}” cannot be edited here; edit the survey through the API.`
  if (survey.type !== 'popover' && survey.type !== 'widget' && survey.type !== 'api') return `A survey of type “${survey.type}” cannot be edited here; edit it through the API.`
  const url = survey.conditions?.url ?? ''
  return {
    name: survey.name,
    type: survey.type,
    questions: survey.questions.map(questionFormOf),
    urlContains: url,
    linkedFlagId: survey.linked_flag?.id != null ? String(survey.linked_flag.id) : '',
  }
}

function questionFormOf(q: SurveyQuestion): QuestionForm {
  return {
    id: q.id,
    type: q.type as QuestionType,
    question: q.question,
    scale: String(q.scale ?? 10),
    lowerBoundLabel: q.lowerBoundLabel ?? '',
    upperBoundLabel: q.upperBoundLabel ?? '',
    choices: (q.choices ?? []).join('\n'),
    link: q.link ?? '',
    buttonText: q.buttonText ?? '',
  }
}

/** The PATCH body of an edited survey, or the reason it cannot be sent. */
export function editBody(form: SurveyForm, survey: Survey): Record<string, unknown> | string {
  const checked = surveyBody(form)
  if (typeof checked === 'string') return checked
  const stored = new Map(survey.questions.filter((q) => q.id).map((q) => [q.id!, q]))
  const questions: SurveyQuestion[] = []
  for (const [i, q] of form.questions.entries()) {
    const made = questionBody(q, i) as SurveyQuestion // surveyBody checked every question
    const before = q.id ? stored.get(q.id) : undefined
    questions.push(before ? keptOf(before, made) : made)
  }
  return { ...checked, questions, conditions: conditionsOf(form, survey), linked_flag_id: form.linkedFlagId ? Number(form.linkedFlagId) : null }
}

/** The edited question over what the stored one had that the form does not show. */
function keptOf(before: SurveyQuestion, made: SurveyQuestion): SurveyQuestion {
  const kept: Record<string, unknown> = {}
  for (const key of KEPT_ACROSS_TYPES) if (before[key] !== undefined) kept[key] = before[key]
  if (before.type !== made.type) return { ...kept, ...made } as SurveyQuestion
  const same = { ...before, ...made }
  if (made.type === 'rating' && before.display) same.display = before.display
  // branching by response names choices by position: other choices make it wrong
  if ((before.choices ?? []).join('\n') !== (made.choices ?? []).join('\n')) delete same.branching
  return same
}

/** The survey's display conditions with the form's URL: the others untouched, the match kind kept while the URL is. */
function conditionsOf(form: SurveyForm, survey: Survey): Record<string, unknown> | null {
  const conditions: Record<string, unknown> = { ...(survey.conditions ?? {}) }
  const url = form.urlContains.trim()
  if (!url) {
    delete conditions.url
    delete conditions.urlMatchType
  } else if (url !== (survey.conditions?.url ?? '')) {
    conditions.url = url
    conditions.urlMatchType = 'icontains'
  }
  return Object.keys(conditions).length > 0 ? conditions : null
}
