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

/** The longest field read: ids are short (a distinct id, a uuid, an email); a longer field is refused at once. */
export const CSV_MAX_FIELD = 1024

function fieldTooLong(): never {
  csvError(`A CSV field may be at most ${CSV_MAX_FIELD} characters.`, 'limit_exceeded')
}

/**
 * One line of CSV (Python's csv.reader dialect: commas, double quotes, "" inside quotes). Scans with indexOf (native
 * speed over long fields) and refuses a field past CSV_MAX_FIELD characters as soon as it is seen.
 */
export function parseCsvLine(line: string): string[] {
  const fields: string[] = []
  let i = 0
  const n = line.length
  for (;;) {
    let field = ''
    if (line.charCodeAt(i) === 34 /* " */) {
      // quoted: to the closing quote, "" standing for one quote; what follows it up to the comma is appended
      i++
      for (;;) {
        const q = line.indexOf('"', i)
        if (q < 0) {
          if (n - i > CSV_MAX_FIELD) fieldTooLong()
          csvError(FORMAT_ERROR)
        }
        if (field.length + (q - i) > CSV_MAX_FIELD) fieldTooLong()
        field += line.slice(i, q)
        if (line.charCodeAt(q + 1) === 34) {
          field += '"'
          i = q + 2
          continue
        }
        i = q + 1
        break
      }
    }
    const comma = line.indexOf(',', i)
    const end = comma < 0 ? n : comma
    if (field.length + (end - i) > CSV_MAX_FIELD) fieldTooLong()
    field += line.slice(i, end)
    fields.push(field)
    if (comma < 0) return fields
    i = comma + 1
  }
}

function decode(bytes: Uint8Array): string {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  } catch {
    return csvError(ENCODING_ERROR)
  }
}

/** Rows parsed between two yields to the event loop: an upload of 500,000 rows never holds it for long. */
const ROWS_PER_TURN = 5000
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** The ids of an uploaded CSV and what they are. Throws PostHog's `csv` errors. */
export async function readCsvIds(bytes: Uint8Array): Promise<{ kind: CsvIdKind; ids: string[] }> {
  const lines = decode(bytes).split(/\r\n|\n|\r/)
  if (lines.length > CSV_MAX_ROWS + 1) csvError(`A CSV upload may have at most ${CSV_MAX_ROWS} rows.`, 'limit_exceeded')
  let at = 0
  // empty leading rows are skipped (a row of empty fields is not empty)
  while (at < lines.length && lines[at] === '') at++
  if (at >= lines.length) csvError(EMPTY_FILE)
  const first = parseCsvLine(lines[at])
  const rows = async function* () {
    for (let i = at + 1; i < lines.length; i++) {
      if ((i - at) % ROWS_PER_TURN === 0) await nextTurn()
      if (lines[i] !== '') yield parseCsvLine(lines[i])
    }
  }
  const ids: string[] = []
  let kind: CsvIdKind
  if (first.filter((c) => c.trim() !== '').length <= 1) {
    const header = (first[0] ?? '').trim().toLowerCase()
    kind = PERSON_ID_HEADERS.includes(header) ? 'person_id' : EMAIL_HEADERS.includes(header) ? 'email' : 'distinct_id'
    if (kind === 'distinct_id' && first[0] !== undefined && first[0].trim() !== '') ids.push(first[0].trim())
    for await (const row of rows()) {
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
    for await (const row of rows()) {
      if (row.length <= column) continue
      const id = row[column].trim()
      if (id !== '') ids.push(id)
    }
  }
  if (ids.length === 0) csvError(NO_VALID_IDS)
  return { kind, ids: [...new Set(ids)] }
}
