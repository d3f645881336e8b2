// The chart's 24 hourly buckets from the query API's rows (pure: unit-tested in hours.test.ts).

export interface HourPoint {
  label: string
  value: number
}

const HOUR = 3600_000

/** The API's times are UTC; one written without a zone is read as UTC too, not as the browser's local time. */
function utc(text: string): number {
  return new Date(/(Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text.replace(' ', 'T')}Z`).getTime()
}

/** A HogQL string literal: backslashes and quotes escaped, so a filter's text stays a value. */
export function hogqlString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** The last 24 hours' events per hour, narrowed by the page's filters (event name, distinct id) when set. */
export function hourlyQuery(filters: { eventName?: string; distinctId?: string }): string {
  const where = ['timestamp > now() - INTERVAL 24 HOUR']
  if (filters.eventName) where.push(`event = ${hogqlString(filters.eventName)}`)
  if (filters.distinctId) where.push(`distinct_id = ${hogqlString(filters.distinctId)}`)
  return `SELECT toStartOfHour(timestamp) AS hour, count() AS events FROM events WHERE ${where.join(' AND ')} GROUP BY hour ORDER BY hour`
}

/** An hour's label: its date and time in `timeZone` (the project's; the browser's when absent), on a 24-hour clock ("27 Nov, 14:00"). */
export function hourLabel(ms: number, timeZone?: string): string {
  return new Date(ms).toLocaleString([], { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', ...(timeZone ? { timeZone } : {}) })
}

/** 24 hourly buckets ending with the current hour; hours without events are 0. */
export function hourlyPoints(rows: [string, number][], now = Date.now(), timeZone?: string): HourPoint[] {
  const counts = new Map<number, number>()
  for (const [hour, count] of rows) counts.set(Math.floor(utc(hour) / HOUR), Number(count))
  const last = Math.floor(now / HOUR)
  const points: HourPoint[] = []
  for (let h = last - 23; h <= last; h++) {
    points.push({ label: hourLabel(h * HOUR, timeZone), value: counts.get(h) ?? 0 })
  }
  return points
}
