// Postgres refuses NUL characters in text and jsonb, and lone UTF-16 surrogates in jsonb. Client data may
// hold both (JSON allows them); anything written to Postgres from events goes through this first.
const NUL = /\0/g

export function wellFormedText(s: string): string {
  const fixed = s.isWellFormed() ? s : s.toWellFormed()
  return fixed.includes('\0') ? fixed.replace(NUL, '\uFFFD') : fixed
}

/**
 * The value with every string (keys included) made acceptable to Postgres. Copy on write: what is already
 * well formed (nearly everything) comes back as the same object, so the flusher allocates nothing for it.
 */
export function wellFormed<T>(value: T): T {
  if (typeof value === 'string') return wellFormedText(value) as T
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null
    for (let i = 0; i < value.length; i++) {
      const fixed = wellFormed(value[i])
      if (fixed !== value[i]) (copy ??= value.slice())[i] = fixed
    }
    return (copy ?? value) as T
  }
  if (typeof value === 'object' && value !== null) {
    let copy: Record<string, unknown> | null = null
    const entries = Object.entries(value)
    for (let i = 0; i < entries.length; i++) {
      const [k, v] = entries[i]
      const fixedKey = wellFormedText(k)
      const fixed = wellFormed(v)
      if (!copy && (fixedKey !== k || fixed !== v)) copy = Object.fromEntries(entries.slice(0, i))
      // defined, not assigned: a "__proto__" key from JSON stays a plain key
      if (copy) Object.defineProperty(copy, fixedKey, { value: fixed, enumerable: true, writable: true, configurable: true })
    }
    return (copy ?? value) as T
  }
  return value
}
