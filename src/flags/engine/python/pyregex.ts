// Python `re` patterns, parsed with Python's grammar and run by a linear-time engine.
//
// The server compiles filter values with `re.compile(pattern, re.DOTALL | re.IGNORECASE)` after
// `sanitize_regex_pattern`, and treats `re.error` as "no match" for both regex and not_regex. We parse the
// pattern with Python's grammar (sre_parse, Python 3.11/3.12 rules) and report the errors Python reports, so a
// pattern Python refuses is refused here too (`(?P<n>…)` is accepted, `\q` is an error). The parsed pattern is
// then emitted for RE2 (pyregex-re2.ts), which matches in time linear in the value: a hostile value cannot
// stall the service. What RE2 cannot run is reported as `unsupported`, treated like an invalid pattern:
//   - backreferences, lookbehind, lookahead (except `(?=.*X)` conditions at the start), atomic groups,
//     possessive quantifiers, repeat counts above 1000 (pyregex-re2.ts);
//   - conditional groups `(?(1)yes|no)`; named characters `\N{…}` (no Unicode name table here).
// docs/compatibility.md#regex lists these and the approximations (\b is ASCII; `$` consumes a final newline).

import { compileLinear, UnsupportedConstruct, type LinearRegex } from './pyregex-re2'

export type PyRegexCompileResult =
  | { ok: true; regex: LinearRegex; source: string }
  | { ok: false; reason: 'invalid' | 'unsupported' | 'exception'; message: string }

// Python flags relevant to us.
const F_I = 1
const F_M = 2
const F_S = 4
const F_X = 8
const F_A = 16
const F_U = 32

const FLAG_BITS: Record<string, number> = { i: F_I, m: F_M, s: F_S, x: F_X, a: F_A, u: F_U, L: 64 }
const isFlag = (c: string | undefined): c is string => c !== undefined && Object.hasOwn(FLAG_BITS, c)
const TYPE_FLAGS = F_A | F_U | 64
const MAXREPEAT = 4294967295

class PyReError extends Error {}
class PyReUnsupported extends Error {}
/** Python raises something other than re.error (OverflowError, ValueError): not caught by the server. */
class PyReException extends Error {}

export type ClassItem =
  | { t: 'lit'; cp: number }
  | { t: 'range'; lo: number; hi: number }
  | { t: 'cat'; cat: string; ascii: boolean }

export type Node =
  | { t: 'lit'; cp: number; ci?: boolean }
  | { t: 'any'; dotAll: boolean }
  | { t: 'class'; neg: boolean; items: ClassItem[]; ci?: boolean }
  | { t: 'cat'; cat: string; ascii: boolean }
  | { t: 'at'; kind: 'bos' | 'eos' | 'pyeos' | 'bol' | 'eol' | 'wb' | 'nwb'; ascii: boolean }
  | { t: 'group'; pyIndex: number | null; iMode: 'on' | 'off' | null; body: Alt }
  | { t: 'look'; behind: boolean; neg: boolean; body: Alt }
  | { t: 'fail' }
  | { t: 'atomic'; body: Alt }
  | { t: 'backref'; pyIndex: number }
  | { t: 'repeat'; min: number; max: number; lazy: boolean; possessive: boolean; body: Node }

export type Alt = Node[][]

const VERBOSE_WS = new Set([' ', '\t', '\n', '\r', '\v', '\f'])
const DIGITS = '0123456789'
const OCTDIGITS = '01234567'
const HEXDIGITS = '0123456789abcdefABCDEF'
const ASCII_LETTER_RE = /^[A-Za-z]$/
const IDENTIFIER_RE = /^[\p{XID_Start}_][\p{XID_Continue}]*$/u

const ESCAPES: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92 }
const CATEGORY_LETTERS = new Set(['d', 'D', 's', 'S', 'w', 'W'])

class Parser {
  private readonly s: string[]
  private pos = 0
  flags: number
  groupCount = 0 // Python groups opened so far
  private readonly groupNames = new Map<string, number>()
  private readonly closedGroups = new Set<number>()
  readonly groupWidths = new Map<number, [number, number]>()
  private lookbehindGroups: number | null = null

  constructor(pattern: string, flags: number) {
    this.s = Array.from(pattern)
    this.flags = flags
  }

  private get next(): string | undefined {
    return this.s[this.pos]
  }
  private get(): string | undefined {
    return this.s[this.pos++]
  }
  /** One sre_parse token: a character, or a backslash with the character after it. */
  private getToken(): string | undefined {
    const c = this.s[this.pos++]
    if (c !== '\\') return c
    const d = this.s[this.pos++]
    if (d === undefined) throw new PyReError('bad escape (end of pattern)')
    return c + d
  }
  private match(c: string): boolean {
    if (this.s[this.pos] === c) {
      this.pos++
      return true
    }
    return false
  }
  private getWhile(n: number, charset: string): string {
    let out = ''
    while (out.length < n && this.next !== undefined && charset.includes(this.next)) out += this.get()
    return out
  }
  private getUntil(terminator: string, what: string): string {
    let out = ''
    for (;;) {
      const c = this.getToken()
      if (c === undefined) throw new PyReError(`missing ${terminator}, unterminated name`)
      if (c === terminator) {
        if (!out) throw new PyReError(`missing ${what}`)
        return out
      }
      out += c
    }
  }

  parsePattern(): Alt {
    const alt = this.parseSub(this.flags & F_X ? true : false, 0, this.flags)
    if (this.next !== undefined) {
      // only ")" can stop the top level early
      throw new PyReError('unbalanced parenthesis')
    }
    // sre_parse.fix_flags, after parsing: ValueError("ASCII and UNICODE flags are incompatible")
    if ((this.flags & F_A) !== 0 && (this.flags & F_U) !== 0) throw new PyReException('ASCII and UNICODE flags are incompatible')
    return alt
  }

  private parseSub(verbose: boolean, nested: number, flags: number): Alt {
    const items: Alt = []
    for (;;) {
      // Global inline flags (only legal at the very start) apply to every later top-level branch too.
      const f = nested === 0 ? this.flags : flags
      const v = nested === 0 ? (this.flags & F_X) !== 0 : verbose
      items.push(this.parseSeq(v, nested + 1, nested === 0 && items.length === 0, f))
      if (!this.match('|')) break
    }
    return items
  }

  private checkGroup(gid: number): boolean {
    return gid <= this.groupCount && this.closedGroups.has(gid)
  }
  private checkLookbehindGroup(gid: number): void {
    if (this.lookbehindGroups !== null) {
      if (!this.checkGroup(gid)) throw new PyReError('cannot refer to an open group')
      if (gid > this.lookbehindGroups) throw new PyReError('cannot refer to group defined in the same lookbehind subpattern')
    }
  }

  private parseSeq(verboseIn: boolean, nested: number, first: boolean, flagsIn: number): Node[] {
    let verbose = verboseIn
    let flags = flagsIn
    const seq: Node[] = []
    for (;;) {
      const c = this.next
      if (c === undefined || c === '|' || c === ')') break
      this.pos++
      if (verbose) {
        if (VERBOSE_WS.has(c)) continue
        if (c === '#') {
          for (;;) {
            const d = this.getToken()
            if (d === undefined || d === '\n') break
          }
          continue
        }
      }
      const ci = (flags & F_I) !== 0 && (flags & F_A) === 0
      if (c === '\\') {
        const n = this.parseEscape(flags)
        if (n.t === 'lit' && ci) n.ci = true
        seq.push(n)
      } else if (!'.\\[{()*+?^$|'.includes(c)) {
        seq.push({ t: 'lit', cp: c.codePointAt(0)!, ci })
      } else if (c === '[') {
        const n = this.parseClass(flags)
        if (ci) n.ci = true
        seq.push(n)
      } else if (c === '*' || c === '+' || c === '?' || c === '{') {
        let min: number
        let max: number
        if (c === '*') {
          min = 0
          max = Infinity
        } else if (c === '+') {
          min = 1
          max = Infinity
        } else if (c === '?') {
          min = 0
          max = 1
        } else {
          if (this.next === '}') {
            seq.push({ t: 'lit', cp: 0x7b })
            continue
          }
          const here = this.pos
          let lo = ''
          let hi = ''
          while (this.next !== undefined && DIGITS.includes(this.next)) lo += this.get()
          if (this.match(',')) {
            while (this.next !== undefined && DIGITS.includes(this.next)) hi += this.get()
          } else hi = lo
          if (!this.match('}')) {
            seq.push({ t: 'lit', cp: 0x7b })
            this.pos = here
            continue
          }
          min = 0
          max = Infinity
          if (lo) {
            min = Number(lo)
            if (min >= MAXREPEAT) throw new PyReException('the repetition number is too large')
          }
          if (hi) {
            max = Number(hi)
            if (max >= MAXREPEAT) throw new PyReException('the repetition number is too large')
            if (max < min) throw new PyReError('min repeat greater than max repeat')
          }
        }
        const item = seq[seq.length - 1]
        if (item === undefined || item.t === 'at') throw new PyReError('nothing to repeat')
        if (item.t === 'repeat') throw new PyReError('multiple repeat')
        let lazy = false
        let possessive = false
        if (this.match('?')) lazy = true
        else if (this.match('+')) possessive = true
        seq[seq.length - 1] = { t: 'repeat', min, max, lazy, possessive, body: item }
      } else if (c === '.') {
        seq.push({ t: 'any', dotAll: (flags & F_S) !== 0 })
      } else if (c === '(') {
        const r = this.parseGroup(verbose, nested, first && seq.length === 0, flags)
        if (r === null) continue // comment
        if ('globalFlags' in r) {
          flags |= r.globalFlags
          this.flags = flags
          verbose = (flags & F_X) !== 0
          continue
        }
        seq.push(r.node)
      } else if (c === '^') {
        seq.push({ t: 'at', kind: flags & F_M ? 'bol' : 'bos', ascii: false })
      } else if (c === '$') {
        seq.push({ t: 'at', kind: flags & F_M ? 'eol' : 'pyeos', ascii: false })
      }
    }
    return seq
  }

  private parseFlags(firstChar: string): { add: number; del: number } | { global: number } {
    let add = 0
    let del = 0
    let ch: string | undefined = firstChar
    if (ch !== '-') {
      for (;;) {
        const bit = FLAG_BITS[ch!]!
        if (ch === 'L') throw new PyReError("bad inline flags: cannot use 'L' flag with a str pattern")
        add |= bit
        if (bit & TYPE_FLAGS && (add & TYPE_FLAGS) !== bit) throw new PyReError("bad inline flags: flags 'a', 'u' and 'L' are incompatible")
        ch = this.get()
        if (ch === undefined) throw new PyReError('missing -, : or )')
        if (ch === ')' || ch === '-' || ch === ':') break
        if (!isFlag(ch)) throw new PyReError(/\p{L}/u.test(ch) ? 'unknown flag' : 'missing -, : or )')
      }
    }
    if (ch === ')') return { global: add }
    if (ch === '-') {
      ch = this.get()
      if (ch === undefined) throw new PyReError('missing flag')
      if (!isFlag(ch)) throw new PyReError(/\p{L}/u.test(ch) ? 'unknown flag' : 'missing flag')
      for (;;) {
        const bit = FLAG_BITS[ch!]!
        if (bit & TYPE_FLAGS) throw new PyReError("bad inline flags: cannot turn off flags 'a', 'u' and 'L'")
        del |= bit
        ch = this.get()
        if (ch === undefined) throw new PyReError('missing :')
        if (ch === ':') break
        if (!isFlag(ch)) throw new PyReError(/\p{L}/u.test(ch) ? 'unknown flag' : 'missing :')
      }
    }
    if (add & del) throw new PyReError('bad inline flags: flag turning on and off')
    return { add, del }
  }

  private parseGroup(
    verbose: boolean,
    nested: number,
    first: boolean,
    flags: number,
  ): { node: Node } | { globalFlags: number } | null {
    let capture = true
    let atomic = false
    let name: string | null = null
    let add = 0
    let del = 0
    if (this.match('?')) {
      const ch = this.get()
      if (ch === undefined) throw new PyReError('unexpected end of pattern')
      if (ch === 'P') {
        if (this.match('<')) {
          name = this.getUntil('>', 'group name')
          if (!IDENTIFIER_RE.test(name)) throw new PyReError(`bad character in group name '${name}'`)
        } else if (this.match('=')) {
          const ref = this.getUntil(')', 'group name')
          if (!IDENTIFIER_RE.test(ref)) throw new PyReError(`bad character in group name '${ref}'`)
          const gid = this.groupNames.get(ref)
          if (gid === undefined) throw new PyReError(`unknown group name '${ref}'`)
          if (!this.checkGroup(gid)) throw new PyReError('cannot refer to an open group')
          this.checkLookbehindGroup(gid)
          return { node: { t: 'backref', pyIndex: gid } }
        } else {
          const c2 = this.get()
          if (c2 === undefined) throw new PyReError('unexpected end of pattern')
          throw new PyReError(`unknown extension ?P${c2}`)
        }
      } else if (ch === ':') {
        capture = false
      } else if (ch === '#') {
        for (;;) {
          if (this.next === undefined) throw new PyReError('missing ), unterminated comment')
          if (this.getToken() === ')') break
        }
        return null
      } else if (ch === '=' || ch === '!' || ch === '<') {
        let kind = ch
        let behind = false
        let savedLookbehind: number | null = null
        if (ch === '<') {
          const c2 = this.get()
          if (c2 === undefined) throw new PyReError('unexpected end of pattern')
          if (c2 !== '=' && c2 !== '!') throw new PyReError(`unknown extension ?<${c2}`)
          kind = c2
          behind = true
          savedLookbehind = this.lookbehindGroups
          if (savedLookbehind === null) this.lookbehindGroups = this.groupCount
        }
        const body = this.parseSub(verbose, nested + 1, flags)
        if (behind && savedLookbehind === null) this.lookbehindGroups = null
        if (!this.match(')')) throw new PyReError('missing ), unterminated subpattern')
        if (behind) {
          const [lo, hi] = this.widthAlt(body)
          if (lo !== hi) throw new PyReError('look-behind requires fixed-width pattern')
        }
        if (kind === '=') return { node: { t: 'look', behind, neg: false, body } }
        const empty = body.length === 1 && body[0]!.length === 0
        if (empty) return { node: { t: 'fail' } }
        return { node: { t: 'look', behind, neg: true, body } }
      } else if (ch === '(') {
        throw new PyReUnsupported('conditional groups are not supported')
      } else if (ch === '>') {
        capture = false
        atomic = true
      } else if (isFlag(ch) || ch === '-') {
        const r = this.parseFlags(ch)
        if ('global' in r) {
          if (!first) throw new PyReError('global flags not at the start of the expression')
          return { globalFlags: r.global }
        }
        add = r.add
        del = r.del
        capture = false
      } else {
        throw new PyReError(`unknown extension ?${ch}`)
      }
    }
    let pyIndex: number | null = null
    if (capture) {
      pyIndex = ++this.groupCount
      if (name !== null) {
        if (this.groupNames.has(name)) throw new PyReError(`redefinition of group name '${name}'`)
        this.groupNames.set(name, pyIndex)
      }
    }
    let subFlags = flags
    if (add & TYPE_FLAGS) subFlags &= ~TYPE_FLAGS
    subFlags = (subFlags | add) & ~del
    const subVerbose = (verbose || (add & F_X) !== 0) && (del & F_X) === 0
    const body = this.parseSub(subVerbose, nested + 1, subFlags)
    if (!this.match(')')) throw new PyReError('missing ), unterminated subpattern')
    if (pyIndex !== null) {
      this.closedGroups.add(pyIndex)
      this.groupWidths.set(pyIndex, this.widthAlt(body))
    }
    if (atomic) return { node: { t: 'atomic', body } }
    const iMode = add & F_I ? 'on' : del & F_I ? 'off' : null
    return { node: { t: 'group', pyIndex, iMode, body } }
  }

  private parseEscape(flags: number): Node {
    const c = this.get()
    if (c === undefined) throw new PyReError('bad escape (end of pattern)')
    const ascii = (flags & F_A) !== 0
    switch (c) {
      case 'A':
        return { t: 'at', kind: 'bos', ascii }
      case 'Z':
        return { t: 'at', kind: 'eos', ascii }
      case 'b':
        return { t: 'at', kind: 'wb', ascii }
      case 'B':
        return { t: 'at', kind: 'nwb', ascii }
    }
    if (CATEGORY_LETTERS.has(c)) return { t: 'cat', cat: c, ascii }
    if (c in ESCAPES) return { t: 'lit', cp: ESCAPES[c]! }
    const hex = this.hexEscape(c)
    if (hex !== null) return { t: 'lit', cp: hex }
    if (c === '0') {
      const more = this.getWhile(2, OCTDIGITS)
      return { t: 'lit', cp: parseInt('0' + more, 8) }
    }
    if (DIGITS.includes(c)) {
      let esc = c
      if (this.next !== undefined && DIGITS.includes(this.next)) {
        esc += this.get()
        if (OCTDIGITS.includes(esc[0]!) && OCTDIGITS.includes(esc[1]!) && this.next !== undefined && OCTDIGITS.includes(this.next)) {
          esc += this.get()
          const v = parseInt(esc, 8)
          if (v > 0o377) throw new PyReError(`octal escape value \\${esc} outside of range 0-0o377`)
          return { t: 'lit', cp: v }
        }
      }
      const gid = Number(esc)
      if (gid <= this.groupCount) {
        if (!this.checkGroup(gid)) throw new PyReError('cannot refer to an open group')
        this.checkLookbehindGroup(gid)
        return { t: 'backref', pyIndex: gid }
      }
      throw new PyReError(`invalid group reference ${gid}`)
    }
    if (ASCII_LETTER_RE.test(c)) throw new PyReError(`bad escape \\${c}`)
    return { t: 'lit', cp: c.codePointAt(0)! }
  }

  /** \x \u \U \N: the code point, or null when c is none of them. */
  private hexEscape(c: string): number | null {
    if (c === 'x' || c === 'u' || c === 'U') {
      const n = c === 'x' ? 2 : c === 'u' ? 4 : 8
      const digits = this.getWhile(n, HEXDIGITS)
      if (digits.length !== n) throw new PyReError(`incomplete escape \\${c}${digits}`)
      const v = parseInt(digits, 16)
      if (v > 0x10ffff) throw new PyReError(`bad escape \\${c}${digits}`)
      return v
    }
    if (c === 'N') throw new PyReUnsupported('named characters \\N{...} are not supported')
    return null
  }

  private parseClassEscape(flags: number): ClassItem {
    const c = this.get()
    if (c === undefined) throw new PyReError('bad escape (end of pattern)')
    if (c === 'b') return { t: 'lit', cp: 8 }
    if (c in ESCAPES) return { t: 'lit', cp: ESCAPES[c]! }
    if (CATEGORY_LETTERS.has(c)) return { t: 'cat', cat: c, ascii: (flags & F_A) !== 0 }
    const hex = this.hexEscape(c)
    if (hex !== null) return { t: 'lit', cp: hex }
    if (OCTDIGITS.includes(c)) {
      const v = parseInt(c + this.getWhile(2, OCTDIGITS), 8)
      if (v > 0o377) throw new PyReError('octal escape value outside of range 0-0o377')
      return { t: 'lit', cp: v }
    }
    if (DIGITS.includes(c)) throw new PyReError(`bad escape \\${c}`)
    if (ASCII_LETTER_RE.test(c)) throw new PyReError(`bad escape \\${c}`)
    return { t: 'lit', cp: c.codePointAt(0)! }
  }

  private parseClass(flags: number): Node & { t: 'class' } {
    const items: ClassItem[] = []
    const neg = this.match('^')
    for (;;) {
      const c = this.get()
      if (c === undefined) throw new PyReError('unterminated character set')
      if (c === ']' && items.length > 0) break
      const code1: ClassItem = c === '\\' ? this.parseClassEscape(flags) : { t: 'lit', cp: c.codePointAt(0)! }
      if (this.match('-')) {
        const that = this.get()
        if (that === undefined) throw new PyReError('unterminated character set')
        if (that === ']') {
          items.push(code1, { t: 'lit', cp: 0x2d })
          break
        }
        const code2: ClassItem = that === '\\' ? this.parseClassEscape(flags) : { t: 'lit', cp: that.codePointAt(0)! }
        if (code1.t !== 'lit' || code2.t !== 'lit') throw new PyReError('bad character range')
        if (code2.cp < code1.cp) throw new PyReError('bad character range')
        items.push({ t: 'range', lo: code1.cp, hi: code2.cp })
      } else {
        items.push(code1)
      }
    }
    return { t: 'class', neg, items }
  }

  // ---- widths (for the fixed-width look-behind rule) ----

  widthAlt(alt: Alt): [number, number] {
    let lo = Infinity
    let hi = 0
    for (const seq of alt) {
      let a = 0
      let b = 0
      for (const n of seq) {
        const [x, y] = this.width(n)
        a += x
        b += y
      }
      lo = Math.min(lo, a)
      hi = Math.max(hi, b)
    }
    if (alt.length === 0) lo = 0
    return [lo, hi]
  }

  private width(n: Node): [number, number] {
    switch (n.t) {
      case 'lit':
      case 'any':
      case 'class':
      case 'cat':
        return [1, 1]
      case 'at':
      case 'look':
      case 'fail':
        return [0, 0]
      case 'group':
      case 'atomic':
        return this.widthAlt(n.body)
      case 'backref':
        return this.groupWidths.get(n.pyIndex) ?? [0, Infinity]
      case 'repeat': {
        const [x, y] = this.width(n.body)
        const hi = y === 0 ? 0 : n.max === Infinity ? Infinity : y * n.max
        return [x * n.min, hi]
      }
    }
  }
}

// ---- emission ----

export interface PyRegexFlags {
  ignoreCase: boolean
  dotAll: boolean
}

/** Compile a Python `re` pattern (str pattern, Unicode) for the linear-time engine (see pyregex-re2.ts). */
export function compilePythonRegex(pattern: string, flags: PyRegexFlags): PyRegexCompileResult {
  let initial = 0 // str patterns are Unicode unless (?a) says ASCII
  if (flags.ignoreCase) initial |= F_I
  if (flags.dotAll) initial |= F_S
  const parser = new Parser(pattern, initial)
  let ast: Alt
  try {
    ast = parser.parsePattern()
  } catch (e) {
    if (e instanceof PyReError) return { ok: false, reason: 'invalid', message: e.message }
    if (e instanceof PyReUnsupported) return { ok: false, reason: 'unsupported', message: e.message }
    if (e instanceof PyReException) return { ok: false, reason: 'exception', message: e.message }
    return { ok: false, reason: 'unsupported', message: String(e) }
  }
  // Global inline (?i) at the start of the pattern also applies.
  const ignoreCase = (parser.flags & F_I) !== 0
  try {
    const regex = compileLinear(ast, ignoreCase)
    return { ok: true, regex, source: regex.source }
  } catch (e) {
    return { ok: false, reason: 'unsupported', message: e instanceof UnsupportedConstruct ? `${e.message} are not supported` : String(e) }
  }
}

// ---- sanitize_regex_pattern ----

const ESCAPED_DQ_MARKER = '__ESCAPED_DOUBLE_QUOTE__'
const ESCAPED_SQ_MARKER = '__ESCAPED_SINGLE_QUOTE__'
const EITHER_QUOTE = `['"]`
const PY_RE_ESCAPE_CHARS = new Set(Array.from('()[]{}?*+-|^$\\.&~# \t\n\r\v\f'))
const PY_WS = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000'
// ['"]KEY['"]\s*:\s*['"]VALUE['"] written with the sanitized spellings, VALUE lazy and without newlines
const KEY_VALUE_RE = new RegExp(`\\['"\\]([^'"${PY_WS}:}]+)\\['"\\]\\\\s\\*:\\\\s\\*\\['"\\]([^\\n]*?)\\['"\\]`, 'u')

function pyReEscape(s: string): string {
  let out = ''
  for (const ch of s) out += PY_RE_ESCAPE_CHARS.has(ch) ? '\\' + ch : ch
  return out
}

/**
 * PostHog's `sanitize_regex_pattern`: patterns containing `"`, `'` or `:` are rewritten so that
 * `"key":"value"` also matches Python-dict spellings (`'key': 'value'`):
 *  1. `\"` and `\'` are set aside;
 *  2. every `"` becomes `['"]`, every `:` becomes `\s*:\s*`, the set-aside quotes become `['"]`;
 *  3. if the result contains `['"]`, it is split on the literal text `[^}]*`; each piece containing
 *     `['"]` is replaced by the lookahead `(?=.*['"]?KEY['"]?\s*:\s*['"]?VALUE['"]?)` built from its
 *     first `['"]KEY['"]\s*:\s*['"]VALUE['"]` (KEY escaped with Python's re.escape), or dropped when it
 *     has none; the pieces are joined back without separator.
 * Returned unchanged otherwise.
 */
export function sanitizeRegexPattern(pattern: string): string {
  if (!(pattern.includes('"') || pattern.includes("'") || pattern.includes(':'))) return pattern
  let p = pattern.split('\\"').join(ESCAPED_DQ_MARKER)
  p = p.split("\\'").join(ESCAPED_SQ_MARKER)
  p = p.split('"').join(EITHER_QUOTE)
  p = p.split(':').join('\\s*:\\s*')
  p = p.split(ESCAPED_DQ_MARKER).join(EITHER_QUOTE)
  p = p.split(ESCAPED_SQ_MARKER).join(EITHER_QUOTE)
  if (p.includes(EITHER_QUOTE)) {
    const parts = p.split('[^}]*')
    const converted: string[] = []
    for (const part of parts) {
      if (part.includes(EITHER_QUOTE)) {
        const m = KEY_VALUE_RE.exec(part)
        if (m) {
          converted.push(`(?=.*['"]?${pyReEscape(m[1]!)}['"]?\\s*:\\s*['"]?${m[2]!}['"]?)`)
        }
      } else {
        converted.push(part)
      }
    }
    p = converted.join('')
  }
  return p
}
