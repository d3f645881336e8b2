// What the surveys API accepts (PostHog's SurveySerializer rules): each member checked by hand, the first problem
// answered 400 with its path in `attr`. Question, description and thank-you texts are sanitised HTML
// (sanitize.ts); links only https or mailto; branching checked against the question count; conditions and
// appearance bounded (known appearance keys only, CSS values plain); the budgets (SurveyLimits) before anything
// is stored.
import { errors } from '../http/errors'
import { assertStorable } from '../http/fields'
import { sanitizeHtml } from './sanitize'

export interface SurveyLimits {
  /** SURVEY_MAX_QUESTIONS */
  maxQuestions: number
  /** SURVEY_MAX_CHOICES */
  maxChoices: number
  /** SURVEY_MAX_BYTES: questions, conditions and appearance as JSON */
  maxBytes: number
  /** a survey refused by one of these budgets (surveys_refused_total) */
  onRefused?: (limit: SurveyLimit) => void
}

export type SurveyLimit = 'surveys_per_project' | 'questions' | 'choices' | 'bytes'

/** The refusal of a budget, counted. */
export function overBudget(limits: Pick<SurveyLimits, 'onRefused'>, limit: SurveyLimit, detail: string, attr: string | null = null) {
  limits.onRefused?.(limit)
  return errors.validation('limit_exceeded', detail, attr)
}

export const SURVEY_TYPES = ['popover', 'widget', 'api', 'external_survey'] as const
export const QUESTION_TYPES = ['open', 'link', 'rating', 'single_choice', 'multiple_choice'] as const
export const SCHEDULES = ['once', 'recurring', 'always'] as const
const RATING_SCALES = [2, 3, 5, 7, 10]
const URL_MATCH_TYPES = ['regex', 'not_regex', 'exact', 'is_not', 'icontains', 'not_icontains']
const DEVICE_TYPES = ['Desktop', 'Mobile', 'Tablet']
const RESPONSE_BASED_KEYS = new Set(['negative', 'neutral', 'positive', 'detractors', 'passives', 'promoters'])
const TEXT_MAX = 5000
const LABEL_MAX = 400

/** Question members posthog-js reads: others are refused (they could carry markup past the sanitiser). */
const QUESTION_KEYS = new Set([
  'id', 'type', 'question', 'description', 'descriptionContentType', 'optional', 'buttonText', 'link', 'scale', 'display',
  'lowerBoundLabel', 'upperBoundLabel', 'isNpsQuestion', 'choices', 'hasOpenChoice', 'shuffleOptions', 'branching',
  'skipSubmitButton', 'originalQuestionIndex',
])
/** Display conditions posthog-js reads. */
const CONDITION_KEYS = new Set([
  'url', 'urlMatchType', 'selector', 'deviceTypes', 'deviceTypesMatchType', 'seenSurveyWaitPeriodInDays', 'linkedFlagVariant',
  'events', 'cancelEvents', 'actions',
])

/** Appearance keys posthog-js reads; values are plain (no markup: the thank-you texts are sanitised). */
const APPEARANCE_KEYS = new Set([
  'backgroundColor', 'submitButtonColor', 'submitButtonText', 'submitButtonTextColor', 'ratingButtonColor',
  'ratingButtonActiveColor', 'ratingButtonHoverColor', 'borderColor', 'borderRadius', 'placeholder', 'whiteLabel',
  'displayThankYouMessage', 'thankYouMessageHeader', 'thankYouMessageDescription', 'thankYouMessageDescriptionContentType',
  'thankYouMessageCloseButtonText', 'autoDisappear', 'position', 'zIndex', 'widgetType', 'widgetSelector', 'widgetLabel',
  'widgetColor', 'fontFamily', 'maxWidth', 'textColor', 'textSubtleColor', 'descriptionTextColor', 'inputBackground',
  'inputTextColor', 'boxPadding', 'boxShadow', 'shuffleQuestions', 'surveyPopupDelaySeconds', 'hideCancelButton',
  'disabledButtonOpacity', 'tabPosition', 'buttonColor', 'buttonTextColor',
])
const POSITIONS = ['top_left', 'top_center', 'top_right', 'middle_left', 'middle_center', 'middle_right', 'left', 'center', 'right', 'next_to_trigger']
/** a CSS value written into posthog-js's styles: no `;`, braces, quotes that would end it, or url() */
const CSS_VALUE = /^[#a-zA-Z0-9(),.%\s+\-/]{0,120}$/
const FONT_FAMILY = /^[a-zA-Z0-9\s,'"-]{0,200}$/

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function text(value: unknown, attr: string, max: number, allowBlank = true): string {
  if (typeof value !== 'string') throw errors.validation('invalid_input', 'Not a valid string.', attr)
  if (!allowBlank && value.trim() === '') throw errors.validation('blank', 'This field may not be blank.', attr)
  if (value.length > max) throw errors.validation('max_length', `Ensure this field has no more than ${max} characters.`, attr)
  assertStorable(value, attr)
  return value
}

const html = (value: unknown, attr: string, max = TEXT_MAX) => sanitizeHtml(text(value, attr, max))

function bool(value: unknown, attr: string): boolean {
  if (typeof value !== 'boolean') throw errors.validation('invalid', 'Must be a valid boolean.', attr)
  return value
}

function whole(value: unknown, attr: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw errors.validation('invalid', 'A valid integer is required.', attr)
  if (value < min || value > max) throw errors.validation('invalid', `Ensure this value is between ${min} and ${max}.`, attr)
  return value
}

function choice<T extends string>(value: unknown, attr: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw errors.validation('invalid_choice', `"${String(value).slice(0, 40)}" is not a valid choice: ${allowed.join(', ')}.`, attr)
  }
  return value as T
}

function date(value: unknown, attr: string): Date | null {
  if (value === null) return null
  if (typeof value !== 'string' || value.length > 64 || !/^\d{4}-\d\d-\d\d/.test(value) || Number.isNaN(Date.parse(value))) {
    throw errors.validation('invalid', 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].', attr)
  }
  return new Date(Date.parse(value))
}

/** PostHog's rule for link questions: only https and mailto. */
export function checkLink(value: unknown, attr: string): string {
  const link = text(value, attr, 2000).trim()
  if (!/^(?:https:\/\/[^\s<>"`]+|mailto:[^\s<>"`]+)$/i.test(link)) {
    throw errors.validation('invalid_input', 'Link must be a URL to resource with one of these schemes [https, mailto]', attr)
  }
  return link
}

/** A branch: where to go after a question (checked against the number of questions). */
function checkBranching(value: unknown, attr: string, index: number, count: number, question: Record<string, unknown>): Record<string, unknown> {
  if (!isObject(value)) throw errors.validation('invalid_input', 'Branching must be an object.', attr)
  const type = choice(value.type, `${attr}__type`, ['next_question', 'end', 'response_based', 'specific_question'] as const)
  const target = (v: unknown, at: string) => {
    if (v === 'end') return
    const to = whole(v, at, 0, count - 1)
    if (to <= index) throw errors.validation('invalid_input', 'A branch must lead to a later question.', at)
  }
  if (type === 'specific_question') {
    target(value.index, `${attr}__index`)
    return { type, index: value.index }
  }
  if (type === 'response_based') {
    if (question.type !== 'rating' && question.type !== 'single_choice') {
      throw errors.validation('invalid_input', 'Response-based branching is only for rating and single choice questions.', `${attr}__type`)
    }
    if (!isObject(value.responseValues)) throw errors.validation('invalid_input', 'responseValues must be an object.', `${attr}__responseValues`)
    const entries = Object.entries(value.responseValues)
    const choices = Array.isArray(question.choices) ? question.choices.length : 0
    if (entries.length > Math.max(choices, RESPONSE_BASED_KEYS.size)) throw errors.validation('invalid_input', 'Too many responseValues.', `${attr}__responseValues`)
    for (const [key, to] of entries) {
      const validKey = question.type === 'rating' ? RESPONSE_BASED_KEYS.has(key) : /^\d{1,5}$/.test(key) && Number(key) < choices
      if (!validKey) throw errors.validation('invalid_input', `"${key.slice(0, 40)}" is not a response of this question.`, `${attr}__responseValues`)
      target(to, `${attr}__responseValues__${key}`)
    }
    return { type, responseValues: value.responseValues }
  }
  return { type }
}

function checkQuestion(value: unknown, attr: string, index: number, count: number, limits: SurveyLimits): Record<string, unknown> {
  if (!isObject(value)) throw errors.validation('invalid_input', 'Each question must be an object.', attr)
  const unknown = Object.keys(value).find((k) => !QUESTION_KEYS.has(k))
  if (unknown !== undefined) throw errors.validation('invalid_input', `Unknown question member "${unknown.slice(0, 60)}".`, `${attr}__${unknown.slice(0, 60)}`)
  const q: Record<string, unknown> = { ...value }
  const type = choice(value.type, `${attr}__type`, QUESTION_TYPES)
  q.question = html(value.question ?? '', `${attr}__question`)
  if (q.question === '') throw errors.validation('blank', 'A question needs its text.', `${attr}__question`)
  if (value.description != null) q.description = html(value.description, `${attr}__description`)
  if (value.descriptionContentType != null) choice(value.descriptionContentType, `${attr}__descriptionContentType`, ['text', 'html'])
  if (value.id != null) q.id = text(value.id, `${attr}__id`, 200, false)
  else q.id = crypto.randomUUID()
  if (value.optional != null) bool(value.optional, `${attr}__optional`)
  for (const key of ['buttonText', 'lowerBoundLabel', 'upperBoundLabel']) if (value[key] != null) text(value[key], `${attr}__${key}`, LABEL_MAX)
  for (const key of ['isNpsQuestion', 'skipSubmitButton']) if (value[key] != null) bool(value[key], `${attr}__${key}`)
  if (value.originalQuestionIndex != null) whole(value.originalQuestionIndex, `${attr}__originalQuestionIndex`, 0, 10_000)
  if (type === 'link') {
    if (value.link != null && value.link !== '') q.link = checkLink(value.link, `${attr}__link`)
  } else if (value.link != null) {
    throw errors.validation('invalid_input', 'Only link questions have a link.', `${attr}__link`)
  }
  if (type === 'rating') {
    if (value.scale != null && !RATING_SCALES.includes(value.scale as number)) {
      throw errors.validation('invalid_input', `A rating scale is one of ${RATING_SCALES.join(', ')}.`, `${attr}__scale`)
    }
    if (value.display != null) choice(value.display, `${attr}__display`, ['number', 'emoji'])
  }
  if (type === 'single_choice' || type === 'multiple_choice') {
    if (!Array.isArray(value.choices) || value.choices.length === 0) throw errors.validation('invalid_input', 'A choice question needs a list of choices.', `${attr}__choices`)
    if (value.choices.length > limits.maxChoices) {
      throw overBudget(limits, 'choices', `A question may offer at most ${limits.maxChoices} choices (SURVEY_MAX_CHOICES).`, `${attr}__choices`)
    }
    q.choices = value.choices.map((c, i) => text(c, `${attr}__choices__${i}`, 1000, false))
    if (value.hasOpenChoice != null) bool(value.hasOpenChoice, `${attr}__hasOpenChoice`)
    if (value.shuffleOptions != null) bool(value.shuffleOptions, `${attr}__shuffleOptions`)
  }
  if (value.branching != null) q.branching = checkBranching(value.branching, `${attr}__branching`, index, count, q)
  return q
}

function checkTriggerEvents(value: unknown, attr: string): unknown {
  if (value === null) return null
  if (!isObject(value)) throw errors.validation('invalid_input', 'Must be an object with "values".', attr)
  if (value.repeatedActivation != null) bool(value.repeatedActivation, `${attr}__repeatedActivation`)
  const values = value.values ?? []
  if (!Array.isArray(values) || values.length > 50) throw errors.validation('invalid_input', 'values: a list of at most 50 events.', `${attr}__values`)
  values.forEach((v, i) => {
    if (!isObject(v)) throw errors.validation('invalid_input', 'Each event is an object with its name.', `${attr}__values__${i}`)
    text(v.name, `${attr}__values__${i}__name`, 400, false)
    if (v.propertyFilters != null) {
      if (!isObject(v.propertyFilters) || Object.keys(v.propertyFilters).length > 50) {
        throw errors.validation('invalid_input', 'propertyFilters: an object of at most 50 properties.', `${attr}__values__${i}__propertyFilters`)
      }
      for (const [key, filter] of Object.entries(v.propertyFilters)) {
        const at = `${attr}__values__${i}__propertyFilters__${key.slice(0, 40)}`
        if (!isObject(filter) || !Array.isArray(filter.values) || filter.values.length > 100) throw errors.validation('invalid_input', 'A property filter is {"values": [...], "operator": ...}.', at)
        if (filter.operator != null) text(filter.operator, `${at}__operator`, 40)
      }
    }
  })
  return value
}

export function checkConditions(value: unknown, attr = 'conditions'): { conditions: Record<string, unknown> | null; actionIds: number[] } {
  if (value === null) return { conditions: null, actionIds: [] }
  if (!isObject(value)) throw errors.validation('invalid_input', 'Conditions must be an object.', attr)
  const c = value
  const unknown = Object.keys(c).find((k) => !CONDITION_KEYS.has(k))
  if (unknown !== undefined) throw errors.validation('invalid_input', `Unknown condition "${unknown.slice(0, 60)}".`, `${attr}__${unknown.slice(0, 60)}`)
  if (c.url != null) text(c.url, `${attr}__url`, 2000)
  if (c.urlMatchType != null) choice(c.urlMatchType, `${attr}__urlMatchType`, URL_MATCH_TYPES)
  if (c.selector != null) text(c.selector, `${attr}__selector`, 1000)
  if (c.deviceTypes != null) {
    if (!Array.isArray(c.deviceTypes) || c.deviceTypes.length > DEVICE_TYPES.length) throw errors.validation('invalid_input', `deviceTypes: a list of ${DEVICE_TYPES.join(', ')}.`, `${attr}__deviceTypes`)
    c.deviceTypes.forEach((d, i) => choice(d, `${attr}__deviceTypes__${i}`, DEVICE_TYPES))
  }
  if (c.deviceTypesMatchType != null) choice(c.deviceTypesMatchType, `${attr}__deviceTypesMatchType`, URL_MATCH_TYPES)
  if (c.seenSurveyWaitPeriodInDays != null) whole(c.seenSurveyWaitPeriodInDays, `${attr}__seenSurveyWaitPeriodInDays`, 0, 3650)
  if (c.linkedFlagVariant != null) text(c.linkedFlagVariant, `${attr}__linkedFlagVariant`, 400)
  if (c.events !== undefined) checkTriggerEvents(c.events, `${attr}__events`)
  if (c.cancelEvents !== undefined) checkTriggerEvents(c.cancelEvents, `${attr}__cancelEvents`)
  const actionIds: number[] = []
  if (c.actions != null) {
    const values = isObject(c.actions) ? c.actions.values : undefined
    if (!Array.isArray(values) || values.length > 50) throw errors.validation('invalid_input', 'actions: {"values": [{"id": …}]}, at most 50.', `${attr}__actions`)
    values.forEach((v, i) => actionIds.push(whole(isObject(v) ? v.id : undefined, `${attr}__actions__values__${i}__id`, 1, 2_147_483_647)))
  }
  return { conditions: c, actionIds }
}

export function checkAppearance(value: unknown, attr = 'appearance'): Record<string, unknown> | null {
  if (value === null) return null
  if (!isObject(value)) throw errors.validation('invalid_input', 'Appearance must be an object.', attr)
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    const at = `${attr}__${key.slice(0, 60)}`
    if (!APPEARANCE_KEYS.has(key)) throw errors.validation('invalid_input', `Unknown appearance setting "${key.slice(0, 60)}".`, at)
    if (v === null || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) {
      out[key] = v
      continue
    }
    if (typeof v !== 'string') throw errors.validation('invalid_input', 'An appearance setting is a string, a number or a boolean.', at)
    if (key === 'thankYouMessageHeader' || key === 'thankYouMessageDescription') out[key] = html(v, at)
    else if (key === 'position') out[key] = choice(v, at, POSITIONS)
    else if (key === 'fontFamily') {
      if (!FONT_FAMILY.test(v)) throw errors.validation('invalid_input', 'A font family is names separated by commas.', at)
      out[key] = v
    } else if (/Color$|Background$|Radius$|Padding$|Shadow$|maxWidth|zIndex|Opacity$/.test(key)) {
      if (!CSS_VALUE.test(v)) throw errors.validation('invalid_input', 'A style value is a plain CSS value (a colour, a length): no ; { } quotes or url().', at)
      out[key] = v
    } else out[key] = text(v, at, 1000)
  }
  return out
}

/** What a create or update writes (undefined: left as it is). */
export interface SurveyInput {
  name?: string
  description?: string
  type?: (typeof SURVEY_TYPES)[number]
  schedule?: (typeof SCHEDULES)[number]
  linked_flag_id?: number | null
  questions?: Record<string, unknown>[]
  conditions?: Record<string, unknown> | null
  appearance?: Record<string, unknown> | null
  start_date?: Date | null
  end_date?: Date | null
  archived?: boolean
  responses_limit?: number | null
  iteration_count?: number | null
  iteration_frequency_days?: number | null
  enable_partial_responses?: boolean
  response_sampling_start_date?: Date | null
  response_sampling_interval_type?: string | null
  response_sampling_interval?: number | null
  response_sampling_limit?: number | null
  /** write-only: the filters of the survey's targeting flag (null: none) */
  targeting_flag_filters?: Record<string, unknown> | null
  remove_targeting_flag?: boolean
  /** the action ids conditions.actions names (checked against the project by the service) */
  actionIds?: number[]
}

export function validateSurveyBody(body: unknown, method: 'POST' | 'PATCH', limits: SurveyLimits): SurveyInput {
  if (!isObject(body)) throw errors.validation('parse_error', 'JSON parse error - the body must be a JSON object.')
  const b = body
  const out: SurveyInput = {}
  if (b.name !== undefined || method === 'POST') out.name = text(b.name ?? '', 'name', 400, false).trim()
  if (b.description != null) out.description = text(b.description, 'description', 10_000)
  if (b.type !== undefined || method === 'POST') {
    if (b.type === undefined) throw errors.validation('required', 'This field is required.', 'type')
    out.type = choice(b.type, 'type', SURVEY_TYPES)
  }
  if (b.schedule != null) out.schedule = choice(b.schedule, 'schedule', SCHEDULES)
  if (b.linked_flag_id !== undefined) out.linked_flag_id = b.linked_flag_id === null ? null : whole(b.linked_flag_id, 'linked_flag_id', 1, 2_147_483_647)
  if (b.questions !== undefined && b.questions !== null) {
    if (!Array.isArray(b.questions)) throw errors.validation('not_a_list', 'Questions must be a list.', 'questions')
    if (b.questions.length > limits.maxQuestions) {
      throw overBudget(limits, 'questions', `A survey may ask at most ${limits.maxQuestions} questions (SURVEY_MAX_QUESTIONS), not ${b.questions.length}.`, 'questions')
    }
    const count = b.questions.length
    out.questions = b.questions.map((q, i) => checkQuestion(q, `questions__${i}`, i, count, limits))
    const ids = new Set(out.questions.map((q) => q.id))
    if (ids.size !== out.questions.length) throw errors.validation('invalid_input', 'Question ids must be unique within a survey.', 'questions')
  } else if (method === 'POST') out.questions = []
  if (b.conditions !== undefined) {
    const { conditions, actionIds } = checkConditions(b.conditions)
    out.conditions = conditions
    out.actionIds = actionIds
  }
  if (b.appearance !== undefined) out.appearance = checkAppearance(b.appearance)
  if (b.start_date !== undefined) out.start_date = date(b.start_date, 'start_date')
  if (b.end_date !== undefined) out.end_date = date(b.end_date, 'end_date')
  if (b.archived !== undefined) out.archived = bool(b.archived, 'archived')
  if (b.responses_limit !== undefined) out.responses_limit = b.responses_limit === null ? null : whole(b.responses_limit, 'responses_limit', 0, 2_147_483_647)
  if (b.iteration_count !== undefined) out.iteration_count = b.iteration_count === null ? null : whole(b.iteration_count, 'iteration_count', 0, 500)
  if (b.iteration_frequency_days !== undefined) {
    out.iteration_frequency_days = b.iteration_frequency_days === null ? null : whole(b.iteration_frequency_days, 'iteration_frequency_days', 1, 3650)
  }
  if (b.enable_partial_responses != null) out.enable_partial_responses = bool(b.enable_partial_responses, 'enable_partial_responses')
  if (b.response_sampling_start_date !== undefined) out.response_sampling_start_date = date(b.response_sampling_start_date, 'response_sampling_start_date')
  if (b.response_sampling_interval_type !== undefined) {
    out.response_sampling_interval_type = b.response_sampling_interval_type === null ? null : choice(b.response_sampling_interval_type, 'response_sampling_interval_type', ['day', 'week', 'month'])
  }
  if (b.response_sampling_interval !== undefined) out.response_sampling_interval = b.response_sampling_interval === null ? null : whole(b.response_sampling_interval, 'response_sampling_interval', 1, 3650)
  if (b.response_sampling_limit !== undefined) out.response_sampling_limit = b.response_sampling_limit === null ? null : whole(b.response_sampling_limit, 'response_sampling_limit', 1, 2_147_483_647)
  if (b.targeting_flag_filters !== undefined) {
    if (b.targeting_flag_filters !== null && !isObject(b.targeting_flag_filters)) throw errors.validation('invalid_input', 'targeting_flag_filters must be an object.', 'targeting_flag_filters')
    out.targeting_flag_filters = b.targeting_flag_filters
  }
  if (b.remove_targeting_flag != null) out.remove_targeting_flag = bool(b.remove_targeting_flag, 'remove_targeting_flag')
  const bytes = Buffer.byteLength(JSON.stringify([out.questions ?? null, out.conditions ?? null, out.appearance ?? null]))
  if (bytes > limits.maxBytes) {
    throw overBudget(limits, 'bytes', `A survey's questions, conditions and appearance may take at most ${limits.maxBytes} bytes (SURVEY_MAX_BYTES), not ${bytes}.`, 'questions')
  }
  return out
}

/** PostHog refuses a targeting flag that would show the survey to everyone: a full rollout with no properties. */
export function checkTargetingFilters(filters: Record<string, unknown>): void {
  const groups = Array.isArray(filters.groups) ? filters.groups : []
  const everyone = groups.some((g) => isObject(g) && (!Array.isArray(g.properties) || g.properties.length === 0) && (g.rollout_percentage == null || g.rollout_percentage === 100))
  if (groups.length === 0 || everyone) {
    throw errors.validation('invalid_input', 'Invalid operation: User targeting rolls out to everyone. Remove the targeting or add properties.', 'targeting_flag_filters')
  }
}
