// A recording's events through the two-step snapshots API: its sources (blocks), then the blocks as JSON lines
// (reading.ts says how many at a time).
import { ApiFailure, api, projectPath } from '../lib/api'
import type { RrwebEvent } from './cv'
import { readBlocks } from './reading'

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
  return readBlocks(
    sources.length,
    (start, end) => lines(`${base}?source=blob_v2&start_blob_key=${start}&end_blob_key=${end}`, signal),
    (error) => error instanceof ApiFailure && error.code === 'answer_too_large',
  )
}
