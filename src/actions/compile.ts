// An action's steps as one HogQL condition over an event: the OR of its steps, each the AND of the parts it sets.
// Every value a user wrote enters the text only as a quoted literal (src/lib/hogql-text.ts), so the condition is
// parsed, checked and compiled for each store like any HogQL; LIKE is compiled per dialect to match identically.
//
// Regex matching (`url_matching` / `text_matching` "regex") and the element parts (`href`, `selector`, `tag_name`,
// read from the `$elements_chain` posthog-js sends: elements.ts) run through HogQL's match(): RE2 on ClickHouse and on
// the embedded DuckDB store; the embedded SQLite store has no regular expressions and refuses them by name. Every
// expression is checked here (RE2's syntax, at most 1000 characters) so that a refusal names the step's member.
// The clicked element's text is read from the `$el_text` property, which posthog-js sends with autocaptured clicks.
import { errors } from '../http/errors'
import { and, isEvent, likeEscaped, prop, str } from '../lib/hogql-text'
import { balanced } from '../query/budget'
import { QueryError } from '../query/errors'
import { checkRegex } from '../query/regex-check'
import { chainKeyRegex, chainMatches, selectorRegex, tagNameRegex } from './elements'
import type { StepInput } from './validation'

/** The property compiler of the insight running (person and cohort filters resolved to their persons). */
export type PropertiesCompiler = (input: StepInput['properties'], attr: string) => Promise<string | null>

/** An action's condition may be at most this long: a funnel of 20 actions must still fit a statement. */
export const MAX_CONDITION_CHARS = 64 * 1024

function refused(detail: string, attr: string): never {
  throw errors.validation('unsupported', detail, attr)
}

/** A regular expression HogQL's match() takes, or a refusal naming `attr` (RE2's syntax, its length). */
function checked(regex: string, attr: string): string {
  try {
    checkRegex(regex, 'match')
  } catch (error) {
    if (error instanceof QueryError) refused(error.message, attr)
    throw error
  }
  return regex
}

/** `column` compared with `value` as `matching` says (contains and exact: case-sensitive, as PostHog compares). */
function matches(column: string, value: string, matching: string | null | undefined, attr: string): string {
  switch (matching ?? 'contains') {
    case 'exact':
      return `${column} = ${str(value)}`
    case 'contains':
      return `toString(${column}) LIKE ${str(`%${likeEscaped(value)}%`)}`
    default:
      return `match(${column}, ${str(checked(value, attr))})`
  }
}

/** One step as a condition ('true' when it sets nothing: every event matches it). */
async function stepCondition(step: StepInput, attr: string, properties: PropertiesCompiler): Promise<string> {
  const parts: (string | null)[] = [isEvent(step.event === '' ? null : step.event)]
  if (step.selector) parts.push(chainMatches(checked(selectorRegex(step.selector), `${attr}__selector`)))
  if (step.tag_name) parts.push(chainMatches(checked(tagNameRegex(step.tag_name), `${attr}__tag_name`)))
  if (step.href) parts.push(chainMatches(checked(chainKeyRegex('href', step.href, step.href_matching), `${attr}__href`)))
  if (step.url) parts.push(matches(prop('$current_url'), step.url, step.url_matching, `${attr}__url`))
  if (step.text) parts.push(matches(prop('$el_text'), step.text, step.text_matching, `${attr}__text`))
  parts.push(await properties(step.properties ?? [], `${attr}__properties`))
  return and(parts)
}

/**
 * The condition of an action's steps (`attr`: where the action is named in the request, for refusals). An action
 * without steps matches no event.
 */
export async function actionCondition(steps: readonly StepInput[], attr: string, properties: PropertiesCompiler): Promise<string> {
  if (steps.length === 0) return '1 = 0'
  const conditions: string[] = []
  for (const [i, step] of steps.entries()) conditions.push(await stepCondition(step, `${attr}__steps__${i}`, properties))
  // a balanced tree of ORs: 50 steps nest 6 levels deep, well within the layer's depth limit, whatever it counts
  const condition = balanced(conditions.map((c) => `(${c})`), ' OR ')
  if (condition.length > MAX_CONDITION_CHARS) {
    refused(`The action's steps make a condition longer than ${MAX_CONDITION_CHARS} characters: use fewer or shorter steps`, attr)
  }
  return condition
}
