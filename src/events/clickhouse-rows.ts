// The rows of one insert as ClickHouse's TabSeparated text, built directly from the stored events: cheaper to
// write than JSONEachRow (no object per row, no second JSON encoding of the properties text) and the cheapest
// text format for the server to parse. Deterministic: the same rows always give the same bytes, which is what
// lets a retry be recognised as the same block.
import type { StoredEvent } from './store'

/** The columns, in the order of each line. */
export const ROW_COLUMNS = ['uuid', 'team_id', 'event', 'distinct_id', 'properties', 'timestamp', 'created_at', 'person_id', '_inserted_at'] as const

const SPECIAL = /[\\\t\n\r\0]/
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' }

/** A String field: backslash, tab, newline (and CR, NUL, for safety) escaped as TabSeparated expects. */
export function tsvString(value: string): string {
  return SPECIAL.test(value) ? value.replace(/[\\\t\n\r\0]/g, (c) => ESCAPES[c]!) : value
}

/** JSON text holds no raw control characters (JSON.stringify escapes them): only its backslashes are doubled. */
function tsvJson(text: string): string {
  return text.includes('\\') ? text.replaceAll('\\', '\\\\') : text
}

/**
 * One string grown line by line (`+=` keeps a rope, flattened once when the caller encodes it): joining an array of
 * per-line strings cost twice as much. The rows of a batch share a few receipt times: the last one is formatted once.
 */
export function rowsAsTabSeparated(rows: readonly StoredEvent[], formatDateTime: (ms: number) => string, insertedAt: string): string {
  let text = ''
  let createdAt = Number.NaN
  let createdText = ''
  for (let i = 0; i < rows.length; i++) {
    const e = rows[i]!
    if (e.createdAt !== createdAt) {
      createdAt = e.createdAt
      createdText = formatDateTime(createdAt)
    }
    text +=
      `${e.uuid}\t${e.teamId}\t${tsvString(e.event)}\t${tsvString(e.distinctId)}\t${tsvJson(e.properties)}\t` +
      `${formatDateTime(e.timestamp)}\t${createdText}\t${e.personId === null ? '\\N' : e.personId}\t${insertedAt}\n`
  }
  return text
}
