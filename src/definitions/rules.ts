// What event and property definitions share: how a search is read, how tags are normalised, and (later) the
// verified / hidden rules. Pure functions: the service and the repositories use them, the tests call them.
import { errors } from '../http/errors'
import { assertStorable, charField } from '../http/fields'

/** Each term is one more pattern over every definition: a thousand of them once held a query for 19 s. */
export const MAX_SEARCH_TERMS = 10
export const MAX_SEARCH_TERM_LENGTH = 200

/** `search`: split on spaces; NUL characters dropped; at most 10 terms of at most 200 characters. */
export function searchTerms(search: string | undefined): string[] {
  const terms = (search ?? '').replace(/\0/g, '').split(' ').filter((t) => t.length > 0)
  if (terms.length > MAX_SEARCH_TERMS || terms.some((t) => t.length > MAX_SEARCH_TERM_LENGTH)) {
    throw errors.validation('invalid_input', `search takes at most ${MAX_SEARCH_TERMS} terms of at most ${MAX_SEARCH_TERM_LENGTH} characters.`, 'search')
  }
  return terms
}

/** LIKE wildcards in user text match themselves (PostHog lets % and _ act as wildcards; we do not). */
export function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/** Tags as PostHog's tagify stores them: trimmed, lower-cased, without duplicates (and without blanks). */
export function normalizeTags(value: unknown, attr = 'tags'): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw errors.validation('not_a_list', 'Expected a list of strings.', attr)
  }
  return [...new Set((value as string[]).map((v) => v.trim().toLowerCase()).filter(Boolean))]
}

/** PostHog's tag limits (bulk tagging): at most 100 tags of at most 255 characters. */
export const MAX_TAGS = 100
export const MAX_TAG_LENGTH = 255

/** `tags` of a write: normalised, and within PostHog's limits. */
export function tagsMember(value: unknown, attr = 'tags'): string[] {
  const tags = normalizeTags(value, attr)
  if (tags.length > MAX_TAGS) throw errors.validation('max_length', `Ensure this field has no more than ${MAX_TAGS} elements.`, attr)
  if (tags.some((t) => t.length > MAX_TAG_LENGTH)) throw errors.validation('max_length', `Each tag may have at most ${MAX_TAG_LENGTH} characters.`, attr)
  assertStorable(tags, attr)
  return tags
}

/** Tags as an answer lists them: sorted (by code point, as Python's sorted()). */
export function sortedTags(tags: readonly string[]): string[] {
  return [...tags].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/** A JSON boolean member of a body; anything else is the wrong type. */
export function booleanMember(value: unknown, attr: string): boolean {
  if (typeof value !== 'boolean') throw errors.validation('invalid', 'Must be a valid boolean.', attr)
  return value
}

export { booleanParam } from '../http/parse'

/** Who verified a definition and whether it is hidden: the part of a definition an admin curates. */
export interface Curation {
  verified: boolean
  verified_at: Date | null
  verified_by_id: number | null
  hidden: boolean
}

export interface CurationChange {
  verified?: boolean
  hidden?: boolean
}

/**
 * PostHog's rules: hiding unverifies; verifying unhides; verifying stamps who and when, unless already verified
 * (then nothing moves); unverifying clears both. Hidden and verified at once is refused.
 */
export function curate(current: Curation, change: CurationChange, userId: number, now: Date, what: 'An event' | 'A property'): Curation {
  if (change.hidden === true && change.verified === true) {
    throw errors.validation('invalid_input', `${what} cannot be both hidden and verified`)
  }
  // only the curation members: `current` may be a whole row
  let next: Curation = { verified: current.verified, verified_at: current.verified_at, verified_by_id: current.verified_by_id, hidden: current.hidden }
  if (change.hidden === true) next = { verified: false, verified_at: null, verified_by_id: null, hidden: true }
  else if (change.hidden === false) next.hidden = false
  if (change.verified === true) {
    next.hidden = false
    if (!current.verified) next = { verified: true, verified_at: now, verified_by_id: userId, hidden: false }
  } else if (change.verified === false) {
    next = { verified: false, verified_at: null, verified_by_id: null, hidden: next.hidden }
  }
  return next
}

export type TagAction = 'add' | 'remove' | 'set'

/** The most ids one bulk tagging names (PostHog's limit), and of ids × tags. */
export const MAX_BULK_IDS = 500
const MAX_BULK_PAIRS = 10_000

export interface BulkTags {
  ids: string[]
  action: TagAction
  tags: string[]
}

/** `{ids, action, tags}` of bulk_update_tags, checked member by member. */
export function parseBulkTags(body: unknown): BulkTags {
  const b = objectBody(body)
  if (b.ids === undefined) throw errors.validation('required', 'This field is required.', 'ids')
  if (!Array.isArray(b.ids) || b.ids.some((id) => typeof id !== 'string')) throw errors.validation('not_a_list', 'Expected a list of ids.', 'ids')
  if (b.ids.length > MAX_BULK_IDS) throw errors.validation('max_length', `Ensure this field has no more than ${MAX_BULK_IDS} elements.`, 'ids')
  if (b.action === undefined) throw errors.validation('required', 'This field is required.', 'action')
  if (b.action !== 'add' && b.action !== 'remove' && b.action !== 'set') {
    throw errors.validation('invalid_choice', `"${String(b.action).slice(0, 100)}" is not a valid choice.`, 'action')
  }
  const tags = tagsMember(b.tags ?? [], 'tags')
  if (b.action !== 'set' && tags.length === 0) throw errors.validation('required', `Tags are required to ${b.action}.`, 'tags')
  const ids = [...new Set(b.ids as string[])]
  if (ids.length * Math.max(tags.length, 1) > MAX_BULK_PAIRS) {
    throw errors.validation('invalid_input', `Too many changes at once: ids × tags may be at most ${MAX_BULK_PAIRS}.`, 'ids')
  }
  return { ids, action: b.action, tags }
}

/** The longest description kept (PostHog's column is unbounded; a request is not). */
export const MAX_DESCRIPTION_LENGTH = 10_000

/** `description`: text (numbers as their text), trimmed; null is the empty description. */
export function descriptionMember(value: unknown): string {
  if (value === null) return ''
  return charField(value, 'description', { allowBlank: true, maxLength: MAX_DESCRIPTION_LENGTH })
}

/** A JSON object body, or 400 (a body sent without a JSON content type arrives as text: it is parsed here). */
export function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body === 'string') {
    try {
      body = body.trim() === '' ? {} : JSON.parse(body)
    } catch {
      throw errors.validation('parse_error', 'Malformed request body.')
    }
  }
  if (body === undefined) body = {}
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.validation('parse_error', 'Expected a JSON object.')
  return body as Record<string, unknown>
}
