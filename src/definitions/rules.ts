// What event and property definitions share: how a search is read, how tags are normalised, and (later) the
// verified / hidden rules. Pure functions: the service and the repositories use them, the tests call them.
import { errors } from '../http/errors'

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
