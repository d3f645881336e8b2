// The project's timezone: insights bucket days in it, so every time the console shows is written in it too (a
// browser elsewhere would otherwise show the same event on another day than the charts count it).
import { api, projectPath } from './api'
import { useAsync } from './ui'
import { useSession } from './session'

/** The project's IANA timezone (null while it is read; 'UTC' when the API names none). */
export function useProjectTimezone(version = 0): string | null {
  const { projectId } = useSession()
  const project = useAsync((signal) => api<{ timezone?: string | null }>(projectPath(projectId, ''), { signal }), [projectId, version])
  if (!project.data) return project.error ? 'UTC' : null
  return project.data.timezone || 'UTC'
}

/** A time written in `timeZone` (the browser's own when null); an unparsable value as it came. */
export function timeIn(value: string | null | undefined, timeZone: string | null): string {
  if (!value) return '—'
  const d = new Date(value)
  if (Number.isNaN(d.getTime())) return value
  try {
    return d.toLocaleString([], timeZone ? { timeZone } : {})
  } catch {
    // a zone this browser does not know: its own time rather than nothing
    return d.toLocaleString()
  }
}

/** The zones a project may take, as this browser lists them, UTC first. */
export function timezoneChoices(current: string | null): string[] {
  const supported = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf
  const zones = supported ? supported('timeZone') : []
  const all = ['UTC', ...zones.filter((z) => z !== 'UTC')]
  if (current && !all.includes(current)) all.push(current)
  return all
}
