// What compiling one query may cost (docs/query.md "Limits"): the expressions compiled, how deeply they nest, the
// compiled statement's size, and the time, checked as the compiler goes so that a hostile query is refused in
// milliseconds on the thread that serves every tenant.
import { checkDeadline, QueryLimitError } from './errors'
import { LIMITS } from './parser'

export const COMPILE_LIMITS = {
  /** bytes of the compiled statement, the values bound to it included */
  maxStatementBytes: 256 * 1024,
  /** expressions compiled: every alias reference and every repeat (ORDER BY 1) counts once */
  maxWork: 200_000,
} as const

export class CompileBudget {
  /** expressions compiled so far (COMPILE_LIMITS.maxWork) */
  private work = 0
  /** expressions being compiled, one inside the other (LIMITS.maxDepth) */
  depth = 0
  /** the deepest `depth` reached (reset by whoever measures the height of a part: an alias) */
  deepest = 0

  /** `deadline`: a `performance.now()` past which compiling stops (QueryDeadlineError) */
  constructor(private readonly deadline: number | undefined) {}

  /** One more expression, one level deeper (leave() when it is compiled). */
  enter(): void {
    if (++this.work > COMPILE_LIMITS.maxWork) {
      throw new QueryLimitError(`The query is too complex: more than ${COMPILE_LIMITS.maxWork} expressions to compile (each alias reference counted)`, 'work')
    }
    if ((this.work & 255) === 0) checkDeadline(this.deadline)
    this.reach(++this.depth)
  }

  leave(): void {
    this.depth--
  }

  /** A part of the tree reaches this depth (an alias compiled already, used here). */
  reach(depth: number): void {
    if (depth > LIMITS.maxDepth) {
      throw new QueryLimitError(`The query nests expressions deeper than ${LIMITS.maxDepth} levels (each operator of a chain and each alias counted)`, 'depth')
    }
    if (depth > this.deepest) this.deepest = depth
  }
}

/** Refuses SQL texts that together are larger than the statement may be (checked before they are joined into one). */
export function fitsStatement(texts: readonly string[]): void {
  let bytes = 0
  for (const text of texts) bytes += text.length
  if (bytes > COMPILE_LIMITS.maxStatementBytes) {
    throw new QueryLimitError(`The query is too complex: its compiled statement would be larger than ${COMPILE_LIMITS.maxStatementBytes} bytes`, 'statement')
  }
}

/** `(a OP b)` for two, `((a OP b) OP (c OP d))` for four: log2(n) levels deep (items[from, to), never empty). */
export function balanced(items: readonly string[], op: string, from = 0, to = items.length): string {
  if (to - from === 1) return items[from]
  const middle = (from + to) >>> 1
  return `(${balanced(items, op, from, middle)}${op}${balanced(items, op, middle, to)})`
}
