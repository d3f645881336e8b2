// The recordings API's work, run on an analytics thread (src/analytics/): the routes check the key and the
// parameters and hand over plain arguments.
import type { Operations } from '../http/offload'
import type { RecordingFilter, RecordingService } from './service'

interface ReplayServices {
  recordings: RecordingService
}

export const replayOperations = {
  'recordings.list': (s: ReplayServices, [teamId, filter, limit, offset]: [number, RecordingFilter, number, number]) => s.recordings.list(teamId, filter, limit, offset),
  'recordings.get': (s: ReplayServices, [teamId, sessionId]: [number, string]) => s.recordings.get(teamId, sessionId),
  'recordings.sources': (s: ReplayServices, [teamId, sessionId]: [number, string]) => s.recordings.sources(teamId, sessionId),
  'recordings.snapshots': (s: ReplayServices, [teamId, sessionId, start, end]: [number, string, number, number]) => s.recordings.snapshots(teamId, sessionId, start, end),
  'recordings.delete': async (s: ReplayServices, [teamId, sessionId]: [number, string]) => {
    await s.recordings.delete(teamId, sessionId)
    return null
  },
} satisfies Operations<ReplayServices>
