// Regex filters compiled once per pattern and run once per subject. Projects copy one rule into many flags and
// cohorts (internal users by an email pattern, a staging host): each copy compiled the pattern again, and in a
// request each ran it again on the same value. A pattern's compiled form is shared while some compiled flag holds
// it, and remembers its last subject's answer (a pure function of the two, so always right to reuse).
import { compilePythonRegex, type PyRegexCompileResult, type PyRegexFlags } from './python/pyregex'
import type { LinearRegex } from './python/pyregex-re2'

/** patterns remembered (weakly: the compiled form itself lives only as long as a flag using it) */
const MAX_PATTERNS = 4096

export class RememberingRegex implements LinearRegex {
  private lastSubject: string | null = null
  private lastFound = false

  constructor(private readonly inner: LinearRegex) {}

  get source(): string {
    return this.inner.source
  }

  test(subject: string): boolean {
    // the flags of one request hand over the same string: a pointer comparison, then the answer
    if (subject === this.lastSubject) return this.lastFound
    const found = this.inner.test(subject)
    this.lastSubject = subject
    this.lastFound = found
    return found
  }
}

const compiled = new Map<string, WeakRef<RememberingRegex>>()

/** compilePythonRegex, with a pattern compiled before (and still in use) handed back instead of compiled again. */
export function sharedPythonRegex(pattern: string, flags: PyRegexFlags): PyRegexCompileResult {
  const key = `${flags.ignoreCase ? 'i' : '-'}${flags.dotAll ? 's' : '-'}${pattern}`
  const known = compiled.get(key)?.deref()
  if (known !== undefined) return { ok: true, regex: known, source: known.source }
  const result = compilePythonRegex(pattern, flags)
  if (!result.ok) return result
  const regex = new RememberingRegex(result.regex)
  compiled.delete(key)
  // first in, first out: a forgotten pattern only costs its next compile
  if (compiled.size >= MAX_PATTERNS) compiled.delete(compiled.keys().next().value!)
  compiled.set(key, new WeakRef(regex))
  return { ok: true, regex, source: regex.source }
}
