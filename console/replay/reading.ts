// How a recording is read and what the player shows beside it, apart from HTTP (so that it is tested alone): blocks
// a few at a time, a range the server finds too large (answer_too_large) asked for again in halves; the console log.
import { eventsOfLines, type RrwebEvent } from './cv'

const BLOCKS_PER_REQUEST = 20

/** A recording holding more events than this is played up to here (the tab's memory is bounded). */
export const MAX_EVENTS = 200_000

/** Blocks 0..count-1 through `readRange` (JSON lines), decompressed, in time order. */
export async function readBlocks(
  count: number,
  readRange: (start: number, end: number) => Promise<string>,
  tooLarge: (error: unknown) => boolean,
): Promise<{ events: RrwebEvent[]; truncated: boolean }> {
  const events: RrwebEvent[] = []
  const read = async (start: number, end: number): Promise<void> => {
    try {
      events.push(...(await eventsOfLines(await readRange(start, end))))
    } catch (error) {
      if (tooLarge(error) && end > start) {
        const middle = Math.floor((start + end) / 2)
        await read(start, middle)
        await read(middle + 1, end)
        return
      }
      throw error
    }
  }
  for (let start = 0; start < count && events.length < MAX_EVENTS; start += BLOCKS_PER_REQUEST) {
    await read(start, Math.min(count, start + BLOCKS_PER_REQUEST) - 1)
  }
  events.sort((a, b) => a.timestamp - b.timestamp)
  return { events: events.slice(0, MAX_EVENTS), truncated: events.length > MAX_EVENTS }
}

export interface ConsoleLine {
  timestamp: number
  level: string
  text: string
}

/** rrweb's console plugin writes each argument as JSON ("text" with its quotes): a string is shown as it was logged. */
function argumentText(part: unknown): string {
  if (typeof part !== 'string') return String(part)
  if (part.startsWith('"') && part.endsWith('"') && part.length >= 2) {
    try {
      return String(JSON.parse(part))
    } catch {}
  }
  return part
}

/** The console log rrweb's console plugin recorded (`rrweb/console@1` plugin events), at most `limit` lines. */
export function consoleLines(events: RrwebEvent[], limit = 2000): ConsoleLine[] {
  const found: ConsoleLine[] = []
  for (const event of events) {
    if (event.type !== 6 || event.data?.plugin !== 'rrweb/console@1') continue
    const payload = event.data.payload ?? {}
    const parts = Array.isArray(payload.payload) ? payload.payload : []
    found.push({ timestamp: event.timestamp, level: String(payload.level ?? 'log').slice(0, 20), text: parts.map(argumentText).join(' ').slice(0, 2000) })
    if (found.length >= limit) break
  }
  return found
}
