// Limit/offset pages with DRF's envelope: {count, next, previous, results}, links absolute.
import { t, type TSchema } from 'elysia'
import { errors } from './errors'
import { model } from './openapi'

// Kept as strings so that a bad value gets DRF's message naming the parameter (see parsePaging).
export const PageQuery = {
  limit: t.Optional(t.String({ description: 'page size, an integer >= 1 (default 100, at most 1000)' })),
  offset: t.Optional(t.String({ description: 'items to skip, an integer >= 0 (default 0)' })),
}

function integerParam(raw: string | undefined, name: string, min: number, fallback: number): number {
  if (raw === undefined || raw === '') return fallback
  if (!/^\s*-?\d+\s*$/.test(raw)) throw errors.validation('invalid_input', 'A valid integer is required.', name)
  const value = Number(raw)
  if (value < min) throw errors.validation('min_value', `Ensure this value is greater than or equal to ${min}.`, name)
  // Out-of-range large values are clamped, not refused (as PostHog does).
  return Math.min(value, Number.MAX_SAFE_INTEGER)
}

/** The largest page any list answers: a larger `limit` gets this many (one request once returned 111 MB). */
export const MAX_PAGE_SIZE = 1000

/**
 * The most bytes one list page carries (events, persons, a cohort's persons): a page stops short of `limit`
 * rather than pass it (at least one item a page; `next` continues where it stopped). A thousand 1 MB events made
 * a 2 GB answer, a thousand persons with large properties 161 MB.
 */
export const LIST_PAGE_MAX_BYTES = 8 * 1024 * 1024

/** How many of the items (their sizes, in order) one page carries. */
export function rowsThatFit(sizes: number[], limit: number, maxBytes = LIST_PAGE_MAX_BYTES): number {
  let n = 0
  let total = 0
  while (n < Math.min(limit, sizes.length)) {
    total += sizes[n]!
    if (n > 0 && total > maxBytes) break
    n++
  }
  return n
}

export function parsePaging(query: { limit?: string; offset?: string }, defaultLimit = 100): { limit: number; offset: number } {
  return {
    limit: Math.min(MAX_PAGE_SIZE, integerParam(query.limit, 'limit', 1, defaultLimit)),
    offset: integerParam(query.offset, 'offset', 0, 0),
  }
}

/** The schema of a page of `item`s, named `name` in the OpenAPI document. */
export function pageModel<T extends TSchema>(name: string, item: T) {
  return model(
    name,
    t.Object({
      count: t.Integer(),
      next: t.Union([t.String(), t.Null()], { description: 'absolute URL of the next page' }),
      previous: t.Union([t.String(), t.Null()], { description: 'absolute URL of the previous page' }),
      results: t.Array(item),
    }),
  )
}

export interface Page<T> {
  count: number
  next: string | null
  previous: string | null
  results: T[]
}

/** The request's URL as the client saw it (honouring X-Forwarded-* behind a trusted proxy). */
export function publicUrl(request: Request, trustProxy: boolean): URL {
  const url = new URL(request.url)
  if (!trustProxy) return url
  const proto = request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim()
  const host = request.headers.get('x-forwarded-host')?.split(',')[0]?.trim()
  const scheme = proto === 'http' || proto === 'https' ? proto : url.protocol.replace(':', '')
  try {
    return new URL(`${url.pathname}${url.search}`, `${scheme}://${host || url.host}`)
  } catch {
    return url
  }
}

/** `taken`: the items this page holds, when it stopped short of `limit` at its byte budget (next starts after them). */
export function pageLinks(url: URL, count: number, limit: number, offset: number, taken = limit): { next: string | null; previous: string | null } {
  let next: string | null = null
  if (offset + taken < count) {
    const u = new URL(url)
    u.searchParams.set('limit', String(limit))
    u.searchParams.set('offset', String(offset + taken))
    next = u.toString()
  }
  let previous: string | null = null
  if (offset > 0) {
    const u = new URL(url)
    u.searchParams.set('limit', String(limit))
    if (offset - limit <= 0) u.searchParams.delete('offset')
    else u.searchParams.set('offset', String(offset - limit))
    previous = u.toString()
  }
  return { next, previous }
}

/** `cut`: the page stopped short of `limit` at its byte budget, and `next` continues right after its items. */
export function page<T>(url: URL, count: number, limit: number, offset: number, results: T[], cut = false): Page<T> {
  return { count, ...pageLinks(url, count, limit, offset, cut ? results.length : limit), results }
}
