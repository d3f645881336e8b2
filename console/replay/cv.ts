// posthog-js compresses parts of some rrweb events (`cv: "2024-10"`): a full snapshot's `data`, a mutation's
// `texts|attributes|removes|adds`, a style sheet rule's `adds|removes`, each a gzip stream written as a latin1
// string. phog keeps them as sent; the player turns them back into JSON here, before rrweb sees them, with the
// browser's own DecompressionStream (no inflate library in the bundle).

/** rrweb's event types and incremental sources that posthog-js compresses. */
const FULL_SNAPSHOT = 2
const INCREMENTAL = 3
const MUTATION = 0
const STYLE_SHEET_RULE = 8

/** One compressed field may not inflate past this: a hostile recording cannot fill the tab's memory. */
export const MAX_INFLATED_BYTES = 64 * 1024 * 1024

export type RrwebEvent = { type: number; timestamp: number; data?: any; cv?: string; [key: string]: unknown }

function latin1Bytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff
  return bytes
}

/** gzip bytes → text, refused past `limit` inflated bytes. */
export async function gunzipText(bytes: Uint8Array, limit = MAX_INFLATED_BYTES): Promise<string> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip'))
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > limit) {
      await reader.cancel()
      throw new Error(`a compressed event inflates past ${limit} bytes`)
    }
    text += decoder.decode(value, { stream: true })
  }
  return text + decoder.decode()
}

async function inflated(value: unknown): Promise<unknown> {
  return typeof value === 'string' ? JSON.parse(await gunzipText(latin1Bytes(value))) : value
}

/** The event as rrweb reads it: its compressed strings decoded, `cv` dropped; any other event as it is. */
export async function decompressEvent(event: RrwebEvent): Promise<RrwebEvent> {
  if (event.cv === undefined) return event
  if (event.cv !== '2024-10') throw new Error(`unknown compression version ${String(event.cv).slice(0, 20)}`)
  const { cv: _, ...rest } = event
  if (event.type === FULL_SNAPSHOT) return { ...rest, data: await inflated(event.data) }
  const data = event.data
  if (event.type === INCREMENTAL && data && typeof data === 'object') {
    const fields = data.source === MUTATION ? ['texts', 'attributes', 'removes', 'adds'] : data.source === STYLE_SHEET_RULE ? ['adds', 'removes'] : []
    const copy = { ...data }
    for (const field of fields) copy[field] = await inflated(data[field])
    return { ...rest, data: copy }
  }
  return rest as RrwebEvent
}

/** JSON lines `[windowId, event]` (the blob_v2 answer) → the events, decompressed; a line that is not one is skipped. */
export async function eventsOfLines(text: string): Promise<RrwebEvent[]> {
  const events: RrwebEvent[] = []
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      continue
    }
    const event = Array.isArray(parsed) ? parsed[1] : parsed
    if (!event || typeof event !== 'object' || typeof (event as RrwebEvent).type !== 'number' || typeof (event as RrwebEvent).timestamp !== 'number') continue
    events.push(await decompressEvent(event as RrwebEvent))
  }
  return events
}
