// An action's body read member by member, as PostHog's serializer reads it, each refusal naming its `attr`; bounded
// so that no action costs much to store, to compile or to run: at most MAX_STEPS steps, every text bounded, every
// regex compiled here (RE2: linear time, and refused when it cannot be compiled or is too long).
import { Value } from '@sinclair/typebox/value'
import { RE2JS } from 're2js'
import { errors } from '../http/errors'
import { assertStorable, charField } from '../http/fields'
import { PropertyFilter } from '../insights/model'

export const ACTION_LIMITS = {
  steps: 50,
  propertiesPerStep: 20,
  /** person and cohort filters of one action, all steps together (each is a scan of the project's persons) */
  personFilters: 5,
  tags: 100,
  tagLength: 255,
  nameLength: 400,
  descriptionLength: 10_000,
  slackFormatLength: 1200,
  eventLength: 400,
  urlLength: 2048,
  textLength: 1000,
  selectorLength: 1000,
  tagNameLength: 100,
  /** a regular expression's length (RE2 compiles it in time linear in its size; each is compiled on every write) */
  regexLength: 1000,
  /**
   * the characters of all of an action's regular expressions together: compiling is linear but not cheap (a
   * thousand characters of counted repeats took 14 ms), and a write is checked on the thread serving the API
   */
  regexTotalLength: 10_000,
} as const

export type Matching = 'contains' | 'exact' | 'regex'

export interface StepInput {
  event: string | null
  url: string | null
  url_matching: Matching | null
  properties: PropertyFilter[]
  text: string | null
  text_matching: Matching | null
  href: string | null
  href_matching: Matching | null
  selector: string | null
  tag_name: string | null
}

export interface ActionInput {
  name?: string
  description?: string
  tags?: string[]
  post_to_slack?: boolean
  slack_message_format?: string
  steps?: StepInput[]
  deleted?: boolean
  pinned_at?: string | null
}

function fail(code: string, detail: string, attr: string): never {
  throw errors.validation(code, detail, attr)
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function booleanField(value: unknown, attr: string): boolean {
  if (typeof value !== 'boolean') fail('invalid_input', 'Must be a valid boolean.', attr)
  return value
}

/** A text that may be absent (null or '' both mean "not set"). */
function optionalText(value: unknown, attr: string, maxLength: number): string | null {
  if (value === undefined || value === null) return null
  const text = charField(value, attr, { allowBlank: true, maxLength })
  return text === '' ? null : text
}

function matchingField(value: unknown, attr: string): Matching | null {
  if (value === undefined || value === null) return null
  if (value !== 'contains' && value !== 'exact' && value !== 'regex') fail('invalid_choice', `"${String(value).slice(0, 64)}" is not a valid choice: contains, exact or regex.`, attr)
  return value
}

/** The characters of regular expressions an action's check has compiled so far (ACTION_LIMITS.regexTotalLength). */
interface RegexBudget {
  chars: number
}

/** A pattern RE2 compiles, within its length bounds (its own, and the action's); refused by `attr` otherwise. */
export function checkRegex(pattern: string, attr: string, budget: RegexBudget = { chars: 0 }): void {
  if (pattern.length > ACTION_LIMITS.regexLength) fail('max_length', `A regular expression may have at most ${ACTION_LIMITS.regexLength} characters.`, attr)
  budget.chars += pattern.length
  if (budget.chars > ACTION_LIMITS.regexTotalLength) fail('max_length', `An action's regular expressions may have at most ${ACTION_LIMITS.regexTotalLength} characters together.`, attr)
  try {
    RE2JS.compile(pattern)
  } catch (error) {
    fail('invalid_regex', `Not a valid regular expression (RE2 syntax): ${(error as Error).message.slice(0, 200)}`, attr)
  }
}

function stepField(raw: unknown, attr: string, budget: RegexBudget): StepInput {
  if (!isObject(raw)) fail('invalid_input', 'Each step must be an object.', attr)
  const step: StepInput = {
    event: optionalText(raw.event, `${attr}__event`, ACTION_LIMITS.eventLength),
    url: optionalText(raw.url, `${attr}__url`, ACTION_LIMITS.urlLength),
    url_matching: matchingField(raw.url_matching, `${attr}__url_matching`),
    properties: [],
    text: optionalText(raw.text, `${attr}__text`, ACTION_LIMITS.textLength),
    text_matching: matchingField(raw.text_matching, `${attr}__text_matching`),
    href: optionalText(raw.href, `${attr}__href`, ACTION_LIMITS.urlLength),
    href_matching: matchingField(raw.href_matching, `${attr}__href_matching`),
    selector: optionalText(raw.selector, `${attr}__selector`, ACTION_LIMITS.selectorLength),
    tag_name: optionalText(raw.tag_name, `${attr}__tag_name`, ACTION_LIMITS.tagNameLength),
  }
  // a URL step matches by `contains` unless told otherwise, as PostHog's does
  if (step.url !== null && step.url_matching === null) step.url_matching = 'contains'
  for (const [value, matching, name] of [
    [step.url, step.url_matching, 'url'],
    [step.text, step.text_matching, 'text'],
    [step.href, step.href_matching, 'href'],
  ] as const) {
    if (value !== null && matching === 'regex') checkRegex(value, `${attr}__${name}`, budget)
  }
  const properties = raw.properties ?? []
  if (!Array.isArray(properties)) fail('invalid_input', 'properties must be a list of property filters.', `${attr}__properties`)
  if (properties.length > ACTION_LIMITS.propertiesPerStep) fail('max_length', `A step may have at most ${ACTION_LIMITS.propertiesPerStep} property filters.`, `${attr}__properties`)
  properties.forEach((filter, i) => {
    const at = `${attr}__properties__${i}`
    if (!Value.Check(PropertyFilter, filter)) fail('invalid_input', 'Not a valid property filter: {key, value, operator, type}.', at)
    assertStorable(filter, at)
    const { key, operator, value } = filter as PropertyFilter
    if (typeof key === 'string' && /["\\\0-\x1f]/.test(key)) fail('invalid_input', 'A property name may not hold a quote, backslash or control character.', `${at}__key`)
    if (operator === 'regex' || operator === 'not_regex') {
      for (const pattern of Array.isArray(value) ? value : [value]) checkRegex(String(pattern ?? ''), `${at}__value`, budget)
    }
  })
  step.properties = properties as PropertyFilter[]
  return step
}

/** A POST (every member it names; `name` required) or PATCH body (only the members it carries). */
export function validateActionBody(body: unknown, method: 'POST' | 'PATCH'): ActionInput {
  if (!isObject(body)) fail('parse_error', 'The body must be a JSON object.', 'body')
  const input: ActionInput = {}
  if (body.name !== undefined || method === 'POST') {
    if (body.name === undefined) fail('required', 'This field is required.', 'name')
    input.name = charField(body.name, 'name', { allowBlank: false, maxLength: ACTION_LIMITS.nameLength })
  }
  if (body.description !== undefined) input.description = body.description === null ? '' : charField(body.description, 'description', { allowBlank: true, maxLength: ACTION_LIMITS.descriptionLength })
  if (body.tags !== undefined && body.tags !== null) {
    if (!Array.isArray(body.tags)) fail('not_a_list', 'Expected a list of items.', 'tags')
    if (body.tags.length > ACTION_LIMITS.tags) fail('max_length', `At most ${ACTION_LIMITS.tags} tags.`, 'tags')
    input.tags = [...new Set(body.tags.map((tag, i) => charField(tag, `tags__${i}`, { allowBlank: false, maxLength: ACTION_LIMITS.tagLength })))]
  }
  if (body.post_to_slack !== undefined) input.post_to_slack = booleanField(body.post_to_slack, 'post_to_slack')
  if (body.slack_message_format !== undefined) {
    input.slack_message_format = body.slack_message_format === null ? '' : charField(body.slack_message_format, 'slack_message_format', { allowBlank: true, maxLength: ACTION_LIMITS.slackFormatLength })
  }
  if (body.steps !== undefined && body.steps !== null) {
    if (!Array.isArray(body.steps)) fail('not_a_list', 'Expected a list of steps.', 'steps')
    if (body.steps.length > ACTION_LIMITS.steps) fail('max_length', `An action may have at most ${ACTION_LIMITS.steps} steps.`, 'steps')
    const budget: RegexBudget = { chars: 0 }
    input.steps = body.steps.map((step, i) => stepField(step, `steps__${i}`, budget))
    const personFilters = input.steps.flatMap((s) => s.properties).filter((f) => f.type !== undefined && f.type !== 'event').length
    if (personFilters > ACTION_LIMITS.personFilters) fail('max_length', `An action may have at most ${ACTION_LIMITS.personFilters} person and cohort filters (all steps together).`, 'steps')
  } else if (body.steps === null) input.steps = []
  if (body.deleted !== undefined) input.deleted = booleanField(body.deleted, 'deleted')
  if (body.pinned_at !== undefined) {
    if (body.pinned_at === null) input.pinned_at = null
    else if (typeof body.pinned_at !== 'string' || !Number.isFinite(Date.parse(body.pinned_at))) fail('invalid', 'Datetime has wrong format.', 'pinned_at')
    else input.pinned_at = new Date(body.pinned_at).toISOString()
  }
  return input
}
