// Datetimes as PostHog's API renders them: ISO 8601 in UTC with Z, microseconds only when non-zero.
export function isoDate(value: Date | number | string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  const d = value instanceof Date ? value : new Date(value)
  if (Number.isNaN(d.getTime())) return null
  const iso = d.toISOString()
  return d.getUTCMilliseconds() === 0 ? `${iso.slice(0, 19)}Z` : `${iso.slice(0, 23)}000Z`
}
