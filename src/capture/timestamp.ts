// Client timestamps to epoch ms: RFC 3339 / ISO 8601 (a missing zone means UTC, "+HH" means "+HH:00"),
// date-only, epoch seconds or milliseconds, and whatever else Date.parse reads (RFC 2822).
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/

export function parseTimestamp(value: unknown): number | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null
    // Seconds until 5138 AD would exceed 1e11; anything larger is milliseconds.
    return Math.abs(value) < 1e11 ? Math.round(value * 1000) : Math.round(value)
  }
  if (typeof value !== 'string') return null
  const s = value.trim()
  if (s === '') return null
  const m = ISO.exec(s)
  if (m) {
    const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', , sign, oh, om] = m
    const month = Number(mo)
    const day = Number(d)
    if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 24 || Number(mi) > 59 || Number(sec) > 60) return null
    const date = new Date(0)
    date.setUTCFullYear(Number(y), month - 1, day)
    date.setUTCHours(Number(h), Number(mi), Number(sec), frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0)
    let ms = date.getTime()
    if (sign) ms -= (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om ?? 0)) * 60_000
    return Number.isNaN(ms) ? null : ms
  }
  if (/^-?\d+(\.\d+)?$/.test(s)) return parseTimestamp(Number(s))
  const parsed = Date.parse(s)
  return Number.isNaN(parsed) ? null : parsed
}
