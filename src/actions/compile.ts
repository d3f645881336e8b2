// An action's steps as one HogQL condition over an event: the OR of its steps, each the AND of the parts it sets.
// Every value a user wrote enters the text only as a quoted literal (src/lib/hogql-text.ts), so the condition is
// parsed, checked and compiled for each store like any HogQL; LIKE is compiled per dialect to match identically.
//
// What the HogQL layer cannot compare the same way on every store is refused by name (docs/actions.md):
// - regex matching (`url_matching` or `text_matching` "regex"): the layer has no regular-expression function that
//   every store computes identically yet;
// - `href`, `selector` and `tag_name`: phog keeps no elements chain (the autocaptured elements) beside an event.
// The clicked element's text is read from the `$el_text` property, which posthog-js sends with autocaptured clicks.
import { errors } from '../http/errors'
import { and, isEvent, likeEscaped, prop, str } from '../lib/hogql-text'
import { balanced } from '../query/budget'
import type { StepInput } from './validation'

/** The property compiler of the insight running (person and cohort filters resolved to their persons). */
export type PropertiesCompiler = (input: StepInput['properties'], attr: string) => Promise<string | null>

/** An action's condition may be at most this long: a funnel of 20 actions must still fit a statement. */
export const MAX_CONDITION_CHARS = 64 * 1024

function refused(detail: string, attr: string): never {
  throw errors.validation('unsupported', detail, attr)
}

/** `column` compared with `value` as `matching` says (contains and exact: case-sensitive, as PostHog compares). */
function matches(column: string, value: string, matching: string | null | undefined, what: string, attr: string): string {
  switch (matching ?? 'contains') {
    case 'exact':
      return `${column} = ${str(value)}`
    case 'contains':
      return `toString(${column}) LIKE ${str(`%${likeEscaped(value)}%`)}`
    default:
      return refused(`${what} matching by regex is not supported by insights yet (no regular-expression function answers the same on every store): use contains or exact`, attr)
  }
}

/** One step as a condition ('true' when it sets nothing: every event matches it). */
async function stepCondition(step: StepInput, attr: string, properties: PropertiesCompiler): Promise<string> {
  for (const part of ['href', 'selector', 'tag_name'] as const) {
    const value = step[part]
    if (value !== null && value !== undefined && value !== '') {
      refused(`Matching by ${part} is not supported: phog keeps no elements chain with events (match the element's text, the URL or properties instead)`, `${attr}__${part}`)
    }
  }
  const parts: (string | null)[] = [isEvent(step.event === '' ? null : step.event)]
  if (step.url) parts.push(matches(prop('$current_url'), step.url, step.url_matching, 'URL', `${attr}__url_matching`))
  if (step.text) parts.push(matches(prop('$el_text'), step.text, step.text_matching, 'Text', `${attr}__text_matching`))
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
