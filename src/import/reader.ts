// Reading an export file as a stream of records, never whole: gzip recognised by its magic bytes (whatever the
// file is named), JSON lines split on newlines, CSV split into rows by a quote-aware state machine (a quoted field
// may hold newlines). A record longer than the bound is reported as too long and skipped to its end, without being
// kept: memory stays at one chunk plus one bounded record.
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { createGunzip } from 'node:zlib'

export type FileFormat = 'jsonl' | 'csv'

export interface RawRecord {
  /** 1-based: the record's position in the file (a CSV header is record 0) */
  index: number
  /** the record's text, or null when it was longer than the bound */
  text: string | null
}

const GZIP_MAGIC = [0x1f, 0x8b]

/** Whether the file starts with gzip's magic bytes. */
export async function isGzip(path: string): Promise<boolean> {
  const handle = await open(path, 'r')
  try {
    const head = Buffer.alloc(2)
    const { bytesRead } = await handle.read(head, 0, 2, 0)
    return bytesRead === 2 && head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1]
  } finally {
    await handle.close()
  }
}

/** The file's bytes, decompressed when it is gzip. */
export async function* fileBytes(path: string): AsyncGenerator<Buffer> {
  const stream = (await isGzip(path)) ? createReadStream(path).pipe(createGunzip()) : createReadStream(path)
  for await (const chunk of stream) yield chunk as Buffer
}

/**
 * Split bytes into records: at newlines outside double quotes when `quoted` (CSV: `""` inside quotes is a quote,
 * so counting quotes tells inside from outside), at every newline otherwise. Empty records are skipped. A record
 * over `maxBytes` yields `text: null` once, and its bytes are dropped as they come.
 */
export async function* splitRecords(chunks: AsyncIterable<Buffer>, maxBytes: number, quoted: boolean): AsyncGenerator<RawRecord> {
  let parts: Buffer[] = []
  let size = 0
  let tooLong = false
  let inQuotes = false
  let index = 0
  const end = function* (): Generator<RawRecord> {
    if (tooLong) {
      index++
      yield { index, text: null }
    } else if (size > 0) {
      let text = Buffer.concat(parts, size).toString('utf8')
      if (text.endsWith('\r')) text = text.slice(0, -1)
      if (text.trim() !== '') {
        index++
        yield { index, text }
      }
    }
    parts = []
    size = 0
    tooLong = false
  }
  for await (const chunk of chunks) {
    let from = 0
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]
      if (quoted && c === 0x22) inQuotes = !inQuotes
      else if (c === 0x0a && !inQuotes) {
        take(chunk.subarray(from, i))
        yield* end()
        from = i + 1
      }
    }
    take(chunk.subarray(from))
  }
  yield* end()

  function take(piece: Buffer): void {
    if (piece.length === 0 || tooLong) return
    if (size + piece.length > maxBytes) {
      tooLong = true
      parts = []
      size = 0
      return
    }
    // copied: the stream may reuse its chunk's memory
    parts.push(Buffer.from(piece))
    size += piece.length
  }
}

/** The fields of one CSV row (RFC 4180: quotes around fields, `""` for a quote inside them). */
export function csvFields(row: string): string[] {
  const fields: string[] = []
  let field = ''
  let i = 0
  let inQuotes = false
  while (i < row.length) {
    const c = row[i]
    if (inQuotes) {
      if (c === '"') {
        if (row[i + 1] === '"') {
          field += '"'
          i += 2
          continue
        }
        inQuotes = false
      } else field += c
    } else if (c === '"') inQuotes = true
    else if (c === ',') {
      fields.push(field)
      field = ''
    } else field += c
    i++
  }
  fields.push(field)
  return fields
}

/** JSON lines or CSV, from the file's first record: an object's `{` means JSON lines. */
export function formatOf(firstRecord: string): FileFormat {
  return firstRecord.trimStart().startsWith('{') ? 'jsonl' : 'csv'
}
