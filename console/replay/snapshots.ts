// A recording's events through the two-step snapshots API: its sources (blocks), then the blocks as JSON lines,
// a few at a time; a range the server finds too large (answer_too_large) is asked for again in halves.
import { ApiFailure, api, projectPath } from '../lib/api'
import { eventsOfLines, type RrwebEvent } from './cv'

const BLOCKS_PER_REQUEST = 20

/** A recording holding more events than this is played up to here (the tab's memory is bounded). */
export const MAX_EVENTS = 200_000

async function lines(path: string, signal: AbortSignal): Promise<string> {
  const response = await fetch(path, { credentials: 'same-origin', signal, headers: { accept: 'application/jsonl' } })
  const text = await response.text()
  if (!response.ok) {
    let data: any = null
    try {
      data = JSON.parse(text)
    } catch {}
    throw new ApiFailure(response.status, data?.code ?? String(response.status), data?.detail ?? `The server answered ${response.status}.`, data?.attr ?? null)
  }
  return text
}

export async function loadRecordingEvents(projectId: number, sessionId: string, signal: AbortSignal): Promise<{ events: RrwebEvent[]; truncated: boolean }> {
  const base = projectPath(projectId, `session_recordings/${encodeURIComponent(sessionId)}/snapshots`)
  const { sources } = await api<{ sources: { blob_key: string }[] }>(base, { signal })
  const events: RrwebEvent[] = []
  const read = async (start: number, end: number): Promise<void> => {
    try {
      events.push(...(await eventsOfLines(await lines(`${base}?source=blob_v2&start_blob_key=${start}&end_blob_key=${end}`, signal))))
    } catch (error) {
      if (error instanceof ApiFailure && error.code === 'answer_too_large' && end > start) {
        const middle = Math.floor((start + end) / 2)
        await read(start, middle)
        await read(middle + 1, end)
        return
      }
      throw error
    }
  }
  for (let start = 0; start < sources.length && events.length < MAX_EVENTS; start += BLOCKS_PER_REQUEST) {
    await read(start, Math.min(sources.length, start + BLOCKS_PER_REQUEST) - 1)
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
