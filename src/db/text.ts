// Postgres refuses NUL characters in text and jsonb, and lone UTF-16 surrogates in jsonb. Client data may
// hold both (JSON allows them); anything written to Postgres from events goes through this first.
const NUL = /\0/g

export function wellFormedText(s: string): string {
  const fixed = s.isWellFormed() ? s : s.toWellFormed()
  return fixed.includes('\0') ? fixed.replace(NUL, '\uFFFD') : fixed
}

/** A deep copy whose every string (keys included) Postgres accepts. */
export function wellFormed<T>(value: T): T {
  if (typeof value === 'string') return wellFormedText(value) as T
  if (Array.isArray(value)) return value.map(wellFormed) as T
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[wellFormedText(k)] = wellFormed(v)
    return out as T
  }
  return value
}
