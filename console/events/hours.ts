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

/** 24 hourly buckets ending with the current hour; hours without events are 0. */
export function hourlyPoints(rows: [string, number][], now = Date.now()): HourPoint[] {
  const counts = new Map<number, number>()
  for (const [hour, count] of rows) counts.set(Math.floor(utc(hour) / HOUR), Number(count))
  const last = Math.floor(now / HOUR)
  const points: HourPoint[] = []
  for (let h = last - 23; h <= last; h++) {
    points.push({ label: new Date(h * HOUR).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }), value: counts.get(h) ?? 0 })
  }
  return points
}
