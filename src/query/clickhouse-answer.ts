// A ClickHouse JSONCompact answer read row by row as it arrives, up to a byte budget: a query selecting gigabytes
// is never held whole. The server writes one row a line between `"data":` and its closing bracket (strings escape
// their newlines), and an error met after the first bytes were sent is appended to the text ("Code: 395, …" on
// 18.16, an "exception" field on current servers).

export interface ReadAnswer {
  rows: unknown[][]
  /** the budget was reached: rows were left unread (and the statement should be stopped) */
  truncated: boolean
  /** the first row alone is larger than the budget */
  firstRowTooLarge: boolean
}

/** An error the server wrote into the answer, with its text (and so its code) for the classification. */
export class AnswerError extends Error {}

function storeError(text: string): AnswerError {
  const at = text.indexOf('Code: ')
  return new AnswerError(at >= 0 ? text.slice(at).replace(/^"|",?$/g, '') : 'the answer ended before its end')
}

export async function readJsonCompact(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<ReadAnswer> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const rows: unknown[][] = []
  let state = 'head' as 'head' | 'open' | 'data' | 'tail'
  let bytes = 0
  let pending = ''
  const stop = (): ReadAnswer => {
    void reader.cancel().catch(() => undefined)
    return { rows, truncated: true, firstRowTooLarge: rows.length === 0 }
  }
  /** false: the budget is reached */
  const line = (text: string): boolean => {
    if (state === 'data') {
      // no rows: the list is written with a blank line inside it
      if (text === '') return true
      if (text === '\t]' || text === '\t],') {
        state = 'tail'
        return true
      }
      const row = text.endsWith(',') ? text.slice(2, -1) : text.slice(2)
      if (bytes + row.length > maxBytes) return false
      let value: unknown
      try {
        value = JSON.parse(row)
      } catch {
        throw storeError(text)
      }
      if (!Array.isArray(value)) throw storeError(text)
      bytes += row.length
      rows.push(value)
      return true
    }
    if (text.includes('Code: ')) throw storeError(text)
    if (state === 'head' && text === '\t"data":') state = 'open'
    else if (state === 'open' && text === '\t[') state = 'data'
    return true
  }
  for (;;) {
    const { done, value } = await reader.read()
    pending += done ? decoder.decode() : decoder.decode(value, { stream: true })
    let from = 0
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n', from)) {
      if (!line(pending.slice(from, end))) return stop()
      from = end + 1
    }
    pending = pending.slice(from)
    // a row still arriving that is already past the budget is not waited for
    if (state === 'data' && bytes + pending.length > maxBytes + 2) return stop()
    if (done) break
  }
  if (pending !== '' && !line(pending)) return stop()
  if (state !== 'tail') throw storeError(pending)
  return { rows, truncated: false, firstRowTooLarge: false }
}
