// The project's settings a PATCH may change (PostHog's team fields insights read): checked member by member, so
// that each refusal names its member in `attr`. The other members of the answer cannot be changed here and are
// ignored (an object read back can be sent as is); any other member is refused by name, so a typo does not pass
// silently.
import type { Sql } from 'postgres'
import { errors } from '../http/errors'
import { isKnownTimezone } from '../lib/timezone'
import { inTransaction } from '../db/postgres'
import { isRecordingField, parseRecordingSettings, updateRecordingSettings, type RecordingSettings } from './recording-settings'
import { updateProjectSettings } from './repository'

/** Members of the project's answer (projectJson) that a PATCH leaves alone. */
const READ_ONLY = new Set(['id', 'uuid', 'organization', 'name', 'api_token', 'api_token_hint', 'created_at'])

export interface ProjectSettings {
  timezone?: string
  weekStartDay?: number
  /** session replay members given (src/projects/recording-settings.ts) */
  recording?: Partial<RecordingSettings>
}

/** What else must happen when the replay settings change: the clients' config is cached with the project's flags. */
export interface RecordingSettingsHooks {
  /** inside the writing transaction (bumps the version other processes compare) */
  changedIn?(tx: Sql, projectId: number): Promise<void>
  /** after it committed (this process's caches) */
  onChanged?(projectId: number): Promise<void>
}

/** The settings a PATCH body asks for; a 400 naming the member for anything invalid. */
export function parseProjectSettings(body: unknown): ProjectSettings {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.invalidPayload('The body must be a JSON object.')
  const input = body as Record<string, unknown>
  const settings: ProjectSettings = {}
  for (const key of Object.keys(input)) {
    if (key === 'timezone' || key === 'week_start_day' || isRecordingField(key) || READ_ONLY.has(key)) continue
    const shown = key.slice(0, 64)
    throw errors.validation('invalid_input', `Unknown field "${shown}": only timezone, week_start_day and the session recording settings can be changed.`, shown)
  }
  if ('timezone' in input) {
    const timezone = input.timezone
    if (typeof timezone !== 'string' || timezone.length > 64 || !isKnownTimezone(timezone)) {
      const shown = typeof timezone === 'string' ? timezone.slice(0, 64) : typeof timezone
      throw errors.validation('invalid_choice', `"${shown}" is not a valid choice: use an IANA timezone name such as "Europe/Berlin", or "UTC".`, 'timezone')
    }
    settings.timezone = timezone
  }
  if ('week_start_day' in input) {
    const day = input.week_start_day
    // null is PostHog's "not set": Sunday
    if (day !== null && day !== 0 && day !== 1) {
      throw errors.validation('invalid_choice', `"${typeof day === 'number' || typeof day === 'string' ? String(day).slice(0, 64) : typeof day}" is not a valid choice: 0 (Sunday) or 1 (Monday).`, 'week_start_day')
    }
    settings.weekStartDay = day ?? 0
  }
  const recording = parseRecordingSettings(input)
  if (Object.keys(recording).length > 0) settings.recording = recording
  return settings
}

export async function changeProjectSettings(sql: Sql, projectId: number, body: unknown, hooks: RecordingSettingsHooks = {}): Promise<void> {
  const settings = parseProjectSettings(body)
  const { recording } = settings
  if (settings.timezone !== undefined || settings.weekStartDay !== undefined) {
    if (!recording) return updateProjectSettings(sql, projectId, settings)
  } else if (!recording) return
  await sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    await updateProjectSettings(tx, projectId, settings)
    await updateRecordingSettings(tx, projectId, recording)
    await hooks.changedIn?.(tx, projectId)
  })
  await hooks.onChanged?.(projectId)
}
