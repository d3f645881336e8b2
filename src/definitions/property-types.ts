// The type ingestion gives a property definition from one value, by PostHog's rules (its property-defs-rs
// service). The key is read lower-cased. In order:
//   1. utm_*, $feature/*, $feature_flag_response and $survey_response* are String, whatever the value;
//   2. under a date-like key (time, timestamp, date, _at, -at, createdat, updatedat), a date-like string or a recent
//      unix timestamp (a non-negative integer, in seconds or milliseconds, newer than six months ago) is DateTime;
//   3. by value: "true"/"false"/"TRUE"/"FALSE" (trimmed) Boolean, a date-like string DateTime, any other string
//      String ("42" too), a number Numeric, a boolean Boolean; null, objects and arrays give no type.
// Pure: `now` is passed in, so the six-month boundary can be tested exactly.

export const PROPERTY_TYPES = ['DateTime', 'String', 'Numeric', 'Boolean', 'Duration'] as const
export type PropertyType = (typeof PROPERTY_TYPES)[number]

/** PostHog's six months, counted in seconds. */
export const RECENT_TIMESTAMP_SECONDS = 15_768_000
/** Integers at least this large are unix milliseconds (as seconds they would be past the year 5000). */
const MILLISECONDS_FROM = 100_000_000_000

const DATE_KEY_PARTS = ['time', 'timestamp', 'date', '_at', '-at', 'createdat', 'updatedat']
const BOOLEAN_TEXT = new Set(['true', 'false', 'TRUE', 'FALSE'])

// 2023-12-13, 2023/12/13, 12-13-2023, 12/13/2023, optionally followed by " hh:mm:ss" or "Thh:mm:ss" and anything.
const DATE_PREFIX = /^(?:\d{4}[-/]\d{2}[-/]\d{2}|[0-2]\d[-/][0-3]\d[-/]\d{4})(?:[ Tt]\d{2}:\d{2}:\d{2}[\s\S]*)?$/
// RFC 2822: "Tue, 1 Jul 2003 10:52:37 +0200" (weekday optional, seconds optional, a zone required).
const RFC_2822 = /^(?:(?:mon|tue|wed|thu|fri|sat|sun),\s*)?\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\s+\d{2,4}\s+\d{2}:\d{2}(?::\d{2})?\s+(?:[+-]\d{4}|ut|gmt|[ecmp][sd]t|[a-ik-z])$/i

function alwaysString(key: string): boolean {
  return key.startsWith('utm_') || key.startsWith('$feature/') || key === '$feature_flag_response' || key.startsWith('$survey_response')
}

function dateLikeKey(key: string): boolean {
  return DATE_KEY_PARTS.some((part) => key.includes(part))
}

/** RFC 3339 / ISO 8601 and the other date shapes PostHog recognises, or RFC 2822. */
export function looksLikeDate(text: string): boolean {
  const trimmed = text.trim()
  return DATE_PREFIX.test(trimmed) || RFC_2822.test(trimmed)
}

/** A unix timestamp (seconds or milliseconds) newer than six months before `nowMs`. */
export function isRecentTimestamp(value: number, nowMs: number): boolean {
  if (!Number.isInteger(value) || value < 0) return false
  const seconds = value >= MILLISECONDS_FROM ? Math.floor(value / 1000) : value
  return seconds >= Math.floor(nowMs / 1000) - RECENT_TIMESTAMP_SECONDS
}

export function detectPropertyType(key: string, value: unknown, nowMs: number): PropertyType | null {
  const lowered = key.toLowerCase()
  if (alwaysString(lowered)) return 'String'
  if (typeof value === 'string') {
    if (BOOLEAN_TEXT.has(value.trim())) return 'Boolean'
    return looksLikeDate(value) ? 'DateTime' : 'String'
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null
    return dateLikeKey(lowered) && isRecentTimestamp(value, nowMs) ? 'DateTime' : 'Numeric'
  }
  if (typeof value === 'boolean') return 'Boolean'
  return null
}
