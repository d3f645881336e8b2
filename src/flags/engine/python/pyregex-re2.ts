// Emit a parsed Python `re` pattern as an RE2 pattern, and match it in linear time.
//
// Flag conditions are matched against values any caller can send in `person_properties`, on the event loop
// that also serves capture. A backtracking engine lets a pattern like `^(a+)+$` stall every endpoint for
// seconds on a 40-character value, so patterns run on RE2 (re2js, a pure-JavaScript port): time linear in
// the length of the value, whatever the pattern. What RE2 cannot express is reported as unsupported (the
// flag REST API refuses it; evaluation treats it like an invalid pattern, false for regex and not_regex).
// docs/compatibility.md#regex lists every difference from Python's `re`.
import { RE2JS } from 're2js'
import type { Alt, ClassItem, Node } from './pyregex'

/** A construct RE2 cannot run; the message names it for the admin who wrote the pattern. */
export class UnsupportedConstruct extends Error {}

/** RE2 refuses larger repeat counts; Python allows up to 2**32-2. */
const RE2_MAX_REPEAT = 1000

/**
 * Values longer than this are not matched at all: regex and not_regex are both false, as for a pattern that
 * cannot be evaluated. RE2 is linear, but linear in 20 MB per condition per request is still too much work
 * for one anonymous call; no real property value is this long.
 */
export const REGEX_MAX_SUBJECT_CHARS = 65_536

// Python str patterns are Unicode-aware: \w is letters, digits (any script) and _; \s is this list.
const WORD_U = '\\p{L}\\p{N}_'
const SPACE_U_RANGES: [number, number][] = [
  [0x9, 0xd], [0x1c, 0x20], [0x85, 0x85], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000],
]
const MAX_CP = 0x10ffff
// Python's IGNORECASE equates i, I, İ (U+0130) and ı (U+0131); RE2's simple case folding does not.
const I_CLUSTER = [0x49, 0x69, 0x130, 0x131]
const I_CLUSTER_CLASS = '\\x{49}\\x{69}\\x{130}\\x{131}'
const NEVER = '[^\\x{0}-\\x{10ffff}]'

function cp(c: number): string {
  if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) return String.fromCodePoint(c)
  return `\\x{${c.toString(16)}}`
}

function rangesToClassBody(ranges: [number, number][]): string {
  return ranges.map(([lo, hi]) => (lo === hi ? cp(lo) : `${cp(lo)}-${cp(hi)}`)).join('')
}

function complement(ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = []
  let next = 0
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1])
    next = hi + 1
  }
  if (next <= MAX_CP) out.push([next, MAX_CP])
  return out
}

// RE2 classes cannot nest, so "not a word character" inside a class is spelled as explicit ranges:
// computed once, on first use, from the engine's own Unicode tables.
let nonWordRanges: [number, number][] | null = null
function nonWordClassBody(): string {
  if (nonWordRanges === null) {
    const word = /[\p{L}\p{N}_]/u
    const ranges: [number, number][] = []
    let inWord = false
    for (let c = 0; c <= MAX_CP; c++) {
      const w = word.test(String.fromCodePoint(c))
      if (w && !inWord) ranges.push([c, c])
      if (w) ranges[ranges.length - 1]![1] = c
      inWord = w
    }
    nonWordRanges = complement(ranges)
  }
  return rangesToClassBody(nonWordRanges)
}

/** A category (\d \D \w \W \s \S) as items inside a class. */
function categoryInClass(cat: string, ascii: boolean): string {
  switch (cat) {
    case 'd':
      return ascii ? '0-9' : '\\p{Nd}'
    case 'D':
      return ascii ? '[:^digit:]' : '\\P{Nd}'
    case 'w':
      return ascii ? '[:word:]' : WORD_U
    case 'W':
      return ascii ? '[:^word:]' : nonWordClassBody()
    case 's':
      return ascii ? '\\x{9}-\\x{d}\\x{20}' : rangesToClassBody(SPACE_U_RANGES)
    default:
      return ascii ? '[:^space:]' : rangesToClassBody(complement(SPACE_U_RANGES))
  }
}

/** A category on its own, outside a class. */
function category(cat: string, ascii: boolean): string {
  switch (cat) {
    case 'W':
      return ascii ? '[^[:word:]]' : `[^${WORD_U}]`
    case 'S':
      return ascii ? '[^\\x{9}-\\x{d}\\x{20}]' : `[^${rangesToClassBody(SPACE_U_RANGES)}]`
    default:
      return `[${categoryInClass(cat, ascii)}]`
  }
}

function touchesICluster(items: ClassItem[]): boolean {
  return items.some((it) =>
    it.t === 'lit' ? I_CLUSTER.includes(it.cp) : it.t === 'range' && I_CLUSTER.some((c) => c >= it.lo && c <= it.hi),
  )
}

interface EmitOptions {
  /** Python never matches \B in an empty string; RE2 does, so an empty subject gets its own program. */
  emptySubject: boolean
}

class Re2Emitter {
  usesNonWordBoundary = false
  constructor(private readonly opts: EmitOptions) {}

  alt(alt: Alt): string {
    return alt.map((seq) => this.seq(seq)).join('|')
  }

  seq(seq: Node[]): string {
    return seq.map((n) => this.node(n)).join('')
  }

  private node(n: Node): string {
    switch (n.t) {
      case 'lit':
        return n.ci && I_CLUSTER.includes(n.cp) ? `[${I_CLUSTER_CLASS}]` : cp(n.cp)
      case 'any':
        return n.dotAll ? '(?s:.)' : '[^\\n]'
      case 'cat':
        return category(n.cat, n.ascii)
      case 'class': {
        let body = ''
        for (const it of n.items) {
          if (it.t === 'lit') body += cp(it.cp)
          else if (it.t === 'range') body += `${cp(it.lo)}-${cp(it.hi)}`
          else body += categoryInClass(it.cat, it.ascii)
        }
        if (n.ci && touchesICluster(n.items)) body += I_CLUSTER_CLASS
        if (body === '') return n.neg ? '(?s:.)' : NEVER
        return `[${n.neg ? '^' : ''}${body}]`
      }
      case 'at':
        switch (n.kind) {
          case 'bos':
            return '\\A'
          case 'eos':
            return '\\z'
          case 'pyeos':
            // Python's `$` also matches before a final newline. RE2 has no lookahead, so the newline is
            // consumed: the same answer unless the pattern goes on to match that newline itself.
            return '(?:\\n?\\z)'
          case 'bol':
            return '(?m:^)'
          case 'eol':
            return '(?m:$)'
          case 'wb':
            // RE2's \b is ASCII: a boundary next to a non-ASCII letter differs from Python's.
            return '\\b'
          default:
            this.usesNonWordBoundary = true
            return this.opts.emptySubject ? NEVER : '\\B'
        }
      case 'group': {
        const open = n.pyIndex !== null ? '(' : n.iMode === 'on' ? '(?i:' : n.iMode === 'off' ? '(?-i:' : '(?:'
        return `${open}${this.alt(n.body)})`
      }
      case 'look':
        throw new UnsupportedConstruct(n.behind ? 'lookbehind assertions (?<=…) and (?<!…)' : 'lookahead assertions (?=…) and (?!…)')
      case 'fail':
        return NEVER
      case 'atomic':
        throw new UnsupportedConstruct('atomic groups (?>…)')
      case 'backref':
        throw new UnsupportedConstruct('backreferences (\\1, (?P=name))')
      case 'repeat': {
        if (n.possessive) throw new UnsupportedConstruct('possessive quantifiers (*+, ++, ?+, {m,n}+)')
        if (n.min > RE2_MAX_REPEAT || (n.max !== Infinity && n.max > RE2_MAX_REPEAT)) {
          throw new UnsupportedConstruct(`repeat counts above ${RE2_MAX_REPEAT}`)
        }
        let q: string
        if (n.min === 0 && n.max === Infinity) q = '*'
        else if (n.min === 1 && n.max === Infinity) q = '+'
        else if (n.min === 0 && n.max === 1) q = '?'
        else if (n.max === Infinity) q = `{${n.min},}`
        else if (n.min === n.max) q = `{${n.min}}`
        else q = `{${n.min},${n.max}}`
        return `(?:${this.node(n.body)})${q}${n.lazy ? '?' : ''}`
      }
    }
  }
}

/** `.*X` with DOTALL at the head of a lookahead body: "X occurs at or after this point". */
function isSearchLookahead(n: Node): n is Extract<Node, { t: 'look' }> {
  if (n.t !== 'look' || n.behind || n.neg || n.body.length !== 1) return false
  const head = n.body[0]![0]
  return (
    head !== undefined && head.t === 'repeat' && head.min === 0 && head.max === Infinity && !head.possessive &&
    head.body.t === 'any' && head.body.dotAll
  )
}

/**
 * Positive lookaheads `(?=.*X)` at the start of a one-branch pattern (after `\A`/`^`, or making up the whole
 * pattern) are conditions on the whole value: "X occurs somewhere". PostHog rewrites `"key":"value"` patterns
 * into exactly these, and `^(?=.*\d)(?=.*[a-z]).{8,}$` is the usual password-style check, so they are kept:
 * each becomes a separate search that must also succeed. Anywhere else a lookahead stays unsupported.
 */
function splitConditions(ast: Alt): { main: Node[] | null; conditions: Alt[] } {
  if (ast.length !== 1) return { main: null, conditions: [] }
  const seq = ast[0]!
  let i = 0
  let anchored = false
  const conditions: Alt[] = []
  for (; i < seq.length; i++) {
    const n = seq[i]!
    if (n.t === 'at' && n.kind === 'bos') anchored = true
    else if (isSearchLookahead(n)) conditions.push(n.body)
    else break
  }
  if (conditions.length === 0) return { main: null, conditions: [] }
  const rest = seq.slice(i).filter((n) => !(n.t === 'at' && n.kind === 'bos'))
  if (!anchored && rest.length > 0) return { main: null, conditions: [] }
  return { main: anchored ? [{ t: 'at', kind: 'bos', ascii: false }, ...rest] : rest, conditions }
}

/** A compiled pattern: `test` is Python's `re.search(...) is not None`, in time linear in the value. */
export interface LinearRegex {
  readonly source: string
  test(subject: string): boolean
}

interface Program {
  re: RE2JS
  emptySubject: RE2JS | null
}

function program(seqOrAlt: Alt, flags: number): { source: string; program: Program } {
  const emitter = new Re2Emitter({ emptySubject: false })
  const source = emitter.alt(seqOrAlt)
  const re = RE2JS.compile(source, flags)
  let emptySubject: RE2JS | null = null
  if (emitter.usesNonWordBoundary) emptySubject = RE2JS.compile(new Re2Emitter({ emptySubject: true }).alt(seqOrAlt), flags)
  return { source, program: { re, emptySubject } }
}

function run(p: Program, subject: string): boolean {
  return (subject === '' && p.emptySubject !== null ? p.emptySubject : p.re).test(subject)
}

/** Compile a parsed pattern for RE2. Throws UnsupportedConstruct, or RE2's own error for what it refuses. */
export function compileLinear(ast: Alt, ignoreCase: boolean): LinearRegex {
  const flags = ignoreCase ? RE2JS.CASE_INSENSITIVE : 0
  const { main, conditions } = splitConditions(ast)
  if (main === null) {
    const { source, program: p } = program(ast, flags)
    return { source, test: (s) => s.length <= REGEX_MAX_SUBJECT_CHARS && run(p, s) }
  }
  const mainProgram = program([main], flags)
  const conditionPrograms = conditions.map((c) => program(c, flags))
  const source = [...conditionPrograms.map((c) => `(?=${c.source})`), mainProgram.source].join('')
  return {
    source,
    test: (s) =>
      s.length <= REGEX_MAX_SUBJECT_CHARS && conditionPrograms.every((c) => run(c.program, s)) && run(mainProgram.program, s),
  }
}
