// The ids of a static cohort's CSV upload, read as PostHog reads them.
//
// One column: a first row `person_id` (or `person-id`, `Person .id`) means person uuids follow, `email` (or `e-mail`)
// means emails; otherwise every row, the first included, is a distinct id. Several columns: the first row is a
// header naming the id column (person_id, then distinct_id, then email). Empty leading rows are skipped.
import { errors } from '../http/errors'

export type CsvIdKind = 'person_id' | 'distinct_id' | 'email'

export const CSV_MAX_ROWS = 500_000

const PERSON_ID_HEADERS = ['person_id', 'person-id', 'person .id']
const DISTINCT_ID_HEADERS = ['distinct_id', 'distinct-id']
const EMAIL_HEADERS = ['email', 'e-mail']

const EMPTY_FILE = 'CSV file is empty. Please upload a CSV file with at least one row of data.'
const NO_VALID_IDS =
  'CSV file contains no valid person IDs, distinct IDs, or email addresses. Please ensure your file has data rows with person IDs, distinct IDs, or email addresses.'
const ENCODING_ERROR = 'CSV file encoding is not supported. Please save your file as UTF-8 and try again.'
const FORMAT_ERROR = 'CSV file format is invalid. Please check your file format and try again.'

function csvError(detail: string, code = 'invalid_input'): never {
  throw errors.validation(code, detail, 'csv')
}

/** One line of CSV (Python's csv.reader dialect: commas, double quotes, "" inside quotes). */
export function parseCsvLine(line: string): string[] {
  const fields: string[] = []
  let field = ''
  let quoted = false
  let i = 0
  let atStart = true
  while (i < line.length) {
    const c = line[i]
    if (quoted) {
      if (c === '"') {
        if (line[i + 1] === '"') {
          field += '"'
          i += 2
          continue
        }
        quoted = false
      } else field += c
    } else if (c === '"' && atStart) {
      quoted = true
      atStart = false
    } else if (c === ',') {
      fields.push(field)
      field = ''
      atStart = true
      i++
      continue
    } else {
      field += c
      atStart = false
    }
    i++
  }
  if (quoted) csvError(FORMAT_ERROR)
  fields.push(field)
  return fields
}

function decode(bytes: Uint8Array): string {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  } catch {
    return csvError(ENCODING_ERROR)
  }
}

/** The ids of an uploaded CSV and what they are. Throws PostHog's `csv` errors. */
export function readCsvIds(bytes: Uint8Array): { kind: CsvIdKind; ids: string[] } {
  const lines = decode(bytes).split(/\r\n|\n|\r/)
  if (lines.length > CSV_MAX_ROWS + 1) csvError(`A CSV upload may have at most ${CSV_MAX_ROWS} rows.`, 'limit_exceeded')
  let at = 0
  // empty leading rows are skipped (a row of empty fields is not empty)
  while (at < lines.length && lines[at] === '') at++
  if (at >= lines.length) csvError(EMPTY_FILE)
  const first = parseCsvLine(lines[at])
  const rows = function* () {
    for (let i = at + 1; i < lines.length; i++) if (lines[i] !== '') yield parseCsvLine(lines[i])
  }
  const ids: string[] = []
  let kind: CsvIdKind
  if (first.filter((c) => c.trim() !== '').length <= 1) {
    const header = (first[0] ?? '').trim().toLowerCase()
    kind = PERSON_ID_HEADERS.includes(header) ? 'person_id' : EMAIL_HEADERS.includes(header) ? 'email' : 'distinct_id'
    if (kind === 'distinct_id' && first[0] !== undefined && first[0].trim() !== '') ids.push(first[0].trim())
    for (const row of rows()) {
      const id = (row[0] ?? '').trim()
      if (id !== '') ids.push(id)
    }
  } else {
    const headers = first.map((h) => h.trim().toLowerCase())
    let column = headers.findIndex((h) => PERSON_ID_HEADERS.includes(h))
    kind = 'person_id'
    if (column < 0) {
      column = headers.findIndex((h) => DISTINCT_ID_HEADERS.includes(h))
      kind = 'distinct_id'
    }
    if (column < 0) {
      column = headers.findIndex((h) => EMAIL_HEADERS.includes(h))
      kind = 'email'
    }
    if (column < 0) {
      const found = first.map((h) => h).filter((h) => h.trim() !== '')
      csvError(
        `Multi-column CSV must contain at least one column with a supported ID header: 'person_id', 'Person .id' (PostHog export format), 'distinct_id', 'distinct-id', or 'email'. Found columns: ${found.length > 0 ? found.join(', ') : 'none'}`,
      )
    }
    for (const row of rows()) {
      if (row.length <= column) continue
      const id = row[column].trim()
      if (id !== '') ids.push(id)
    }
  }
  if (ids.length === 0) csvError(NO_VALID_IDS)
  return { kind, ids: [...new Set(ids)] }
}
