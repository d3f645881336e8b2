// The surveys API's shape (PostHog's SurveySerializer) as far as the console reads it, and the form's own shape with
// the body it sends.

export type QuestionType = 'open' | 'rating' | 'single_choice' | 'multiple_choice' | 'link'
export type SurveyType = 'popover' | 'widget' | 'api'

export interface SurveyQuestion {
  id?: string
  type: QuestionType | string
  question: string
  description?: string
  descriptionContentType?: 'text' | 'html' | string
  optional?: boolean
  scale?: number
  display?: 'number' | 'emoji'
  lowerBoundLabel?: string
  upperBoundLabel?: string
  choices?: string[]
  hasOpenChoice?: boolean
  link?: string | null
  buttonText?: string
  branching?: unknown
}

export interface Survey {
  id: string
  name: string
  description?: string
  type: SurveyType | string
  questions: SurveyQuestion[]
  conditions: { url?: string | null; urlMatchType?: string | null; linkedFlagVariant?: string | null; [other: string]: unknown } | null
  linked_flag: { id: number; key: string } | null
  linked_flag_id?: number | null
  targeting_flag?: { id: number; key: string } | null
  start_date: string | null
  end_date: string | null
  archived: boolean
  created_at: string | null
}

export type SurveyStatus = 'draft' | 'running' | 'stopped'

/** PostHog's rule: running once started and not yet ended; stopped once ended; a draft before. */
export function surveyStatus(survey: Pick<Survey, 'start_date' | 'end_date'>): SurveyStatus {
  if (!survey.start_date) return 'draft'
  return survey.end_date ? 'stopped' : 'running'
}

export const STATUS_TEXT: Record<SurveyStatus, string> = { draft: 'Draft', running: 'Running', stopped: 'Stopped' }

export const TYPE_TEXT: Record<string, string> = { popover: 'Popover', widget: 'Widget', api: 'API', external_survey: 'Hosted' }

export const QUESTION_TYPES: [QuestionType, string][] = [
  ['open', 'Open text'],
  ['rating', 'Rating'],
  ['single_choice', 'Single choice'],
  ['multiple_choice', 'Multiple choice'],
  ['link', 'Link'],
]

/** Rating scales posthog-js draws (numbers). */
export const RATING_SCALES = [3, 5, 7, 10] as const

export const MAX_QUESTIONS = 20
export const MAX_CHOICES = 20

/** A question as the form holds it: every field a string, choices one a line. */
export interface QuestionForm {
  /** the stored question's id when editing: answers are kept by it */
  id?: string
  type: QuestionType
  question: string
  scale: string
  lowerBoundLabel: string
  upperBoundLabel: string
  choices: string
  link: string
  buttonText: string
}

export interface SurveyForm {
  name: string
  type: SurveyType
  questions: QuestionForm[]
  /** the page's URL must contain this (empty: any page) */
  urlContains: string
  /** the id of the linked feature flag ('' for none) */
  linkedFlagId: string
}

export function emptyQuestion(type: QuestionType = 'open'): QuestionForm {
  return { type, question: '', scale: '10', lowerBoundLabel: 'Unlikely', upperBoundLabel: 'Very likely', choices: '', link: '', buttonText: '' }
}

/** The choices of a choice question: one a line, trimmed, empty lines and repeats left out. */
export function choicesOf(text: string): string[] {
  const seen = new Set<string>()
  for (const line of text.split('\n')) {
    const choice = line.trim()
    if (choice && !seen.has(choice)) seen.add(choice)
  }
  return [...seen]
}

/** A question as the API takes it, or the reason it cannot be sent (the server checks again). */
export function questionBody(form: QuestionForm, index: number): SurveyQuestion | string {
  const question = form.question.trim()
  const where = `Question ${index + 1}`
  if (!question) return `${where} has no text.`
  const made = questionOfType(form, question, where)
  return typeof made === 'string' || !form.id ? made : { id: form.id, ...made }
}

function questionOfType(form: QuestionForm, question: string, where: string): SurveyQuestion | string {
  switch (form.type) {
    case 'open':
      return { type: 'open', question }
    case 'rating': {
      const scale = Number(form.scale)
      if (!(RATING_SCALES as readonly number[]).includes(scale)) return `${where}: the scale is one of ${RATING_SCALES.join(', ')}.`
      return { type: 'rating', question, display: 'number', scale, lowerBoundLabel: form.lowerBoundLabel.trim(), upperBoundLabel: form.upperBoundLabel.trim() }
    }
    case 'single_choice':
    case 'multiple_choice': {
      const choices = choicesOf(form.choices)
      if (choices.length < 2) return `${where} needs at least two choices (one a line).`
      if (choices.length > MAX_CHOICES) return `${where} has more than ${MAX_CHOICES} choices.`
      return { type: form.type, question, choices }
    }
    case 'link': {
      const link = form.link.trim()
      // posthog-js opens it: PostHog accepts https and mailto only
      if (!/^(https:\/\/|mailto:)/i.test(link)) return `${where}: the link starts with https:// or mailto:.`
      return { type: 'link', question, link, buttonText: form.buttonText.trim() || undefined }
    }
  }
}

/** The POST body of a new survey, or the reason it cannot be sent. */
export function surveyBody(form: SurveyForm): Record<string, unknown> | string {
  const name = form.name.trim()
  if (!name) return 'The survey needs a name.'
  if (form.questions.length === 0) return 'The survey needs a question.'
  if (form.questions.length > MAX_QUESTIONS) return `A survey has at most ${MAX_QUESTIONS} questions here.`
  const questions: SurveyQuestion[] = []
  for (const [i, q] of form.questions.entries()) {
    const made = questionBody(q, i)
    if (typeof made === 'string') return made
    questions.push(made)
  }
  const body: Record<string, unknown> = { name, type: form.type, questions }
  const url = form.urlContains.trim()
  if (url) body.conditions = { url, urlMatchType: 'icontains' }
  if (form.linkedFlagId) body.linked_flag_id = Number(form.linkedFlagId)
  return body
}
