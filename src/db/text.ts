// Postgres refuses NUL characters in text and jsonb, and lone UTF-16 surrogates in jsonb. Client data may
// hold both (JSON allows them); anything written to Postgres from events goes through this first.
const NUL = /\0/g

export function wellFormedText(s: string): string {
  const fixed = s.isWellFormed() ? s : s.toWellFormed()
  return fixed.includes('\0') ? fixed.replace(NUL, '\uFFFD') : fixed
}

/**
 * Whether every string JSON.parse makes of this text (keys included) is already acceptable: the text is well formed
 * and holds no \u escape, the only way JSON makes a NUL or a lone surrogate (a raw NUL is no valid JSON). A scan of
 * the text, far cheaper than walking what it parses to. False is only "not known".
 */
export function jsonTextWellFormed(text: string): boolean {
  return !text.includes('\\u') && text.isWellFormed()
}

/** Whether a string needs no change (wellFormedText would return it as it is). */
export function isWellFormedText(s: string): boolean {
  return s.isWellFormed() && !s.includes('\0')
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
    // keys and values read in place: Object.entries would allocate a pair for every property of every event
    const object = value as Record<string, unknown>
    const keys = Object.keys(object)
    let copy: Record<string, unknown> | null = null
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]
      const v = object[k]
      const fixedKey = wellFormedText(k)
      const fixed = wellFormed(v)
      if (!copy && (fixedKey !== k || fixed !== v)) {
        copy = {}
        for (let j = 0; j < i; j++) defineOwn(copy, keys[j], object[keys[j]])
      }
      if (copy) defineOwn(copy, fixedKey, fixed)
    }
    return (copy ?? value) as T
  }
  return value
}

/** Defined, not assigned: a "__proto__" key from JSON stays a plain key. */
function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}
