// Literal text the compiler reads for itself: date-time literals, LIKE patterns, and time arithmetic on constants.
import { addMonths, DAY_MS, HOUR_MS } from './dialect'
import { QueryError } from './errors'

export const UNIT_MS: Record<string, number> = { SECOND: 1000, MINUTE: 60_000, HOUR: HOUR_MS, DAY: DAY_MS, WEEK: 7 * DAY_MS }

export function shift(ms: number, count: number, unit: string): number {
  return unit === 'MONTH' ? addMonths(ms, count) : ms + count * UNIT_MS[unit]
}

export function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase())
}

/** A LIKE pattern (% _ and \-escapes) as a GLOB pattern. */
export function likeToGlob(pattern: string): string {
  let out = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\' && i + 1 < pattern.length) {
      const next = pattern[++i]
      out += next === '*' || next === '?' || next === '[' ? `[${next}]` : next
    } else if (c === '%') out += '*'
    else if (c === '_') out += '?'
    else if (c === '*' || c === '?' || c === '[') out += `[${c}]`
    else out += c
  }
  return out
}

/** One character of a LIKE pattern as an RE2 literal: punctuation escaped, control characters by code. */
function regexLiteral(c: string): string {
  const code = c.charCodeAt(0)
  if (code >= 0x80 || /[A-Za-z0-9]/.test(c)) return c
  if (code < 0x20 || code === 0x7f || c === ' ') return `\\x{${code.toString(16)}}`
  return `\\${c}`
}

/**
 * A LIKE pattern (% _ and \-escapes) as an RE2 expression for a whole-string match: RE2 takes time linear in the
 * text whatever the pattern, where DuckDB's GLOB and LIKE backtrack (`%x%x%x…%y` on a long text never ends, and
 * DuckDB's interrupt is not checked inside one function call). `_` is one character, as on the other stores.
 */
export function likeToRegex(pattern: string): string {
  const out: string[] = []
  let anything = false // the last piece is .* (%% is %: one is enough)
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    const piece = c === '\\' && i + 1 < pattern.length ? regexLiteral(pattern[++i]) : c === '%' ? '.*' : c === '_' ? '.' : regexLiteral(c)
    if (piece === '.*' && anything) continue
    anything = piece === '.*'
    out.push(piece)
  }
  return out.join('')
}

/** '2024-01-02', '2024-01-02 03:04:05', ISO 8601 with a zone: epoch ms (UTC unless a zone is given). */
export function parseTimeLiteral(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/.exec(text.trim())
  if (!m) throw new QueryError(`"${text}" is not a date or time (expected YYYY-MM-DD or YYYY-MM-DD hh:mm:ss)`)
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}.${(m[7] ?? '0').padEnd(3, '0').slice(0, 3)}${m[8] ? (m[8] === 'Z' ? 'Z' : m[8].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2')) : 'Z'}`)
  if (Number.isNaN(ms)) throw new QueryError(`"${text}" is not a valid date or time`)
  return ms
}

