// The query text → tokens, each with its line and column (1-based) for error messages.
import { checkDeadline, QueryError, QueryLimitError } from './errors'

export type TokenKind = 'ident' | 'quoted' | 'number' | 'string' | 'op' | 'eof'

export interface Token {
  kind: TokenKind
  /** identifiers as written (keywords are identifiers compared case-insensitively); strings unescaped */
  text: string
  offset: number
  end: number
  line: number
  column: number
}

const TWO_CHARACTER_OPERATORS = new Set(['<=', '>=', '!=', '<>', '=='])
const OPERATORS = new Set(['(', ')', ',', '.', '[', ']', '+', '-', '*', '/', '%', '=', '<', '>', ';'])
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f' }
// by character code: the lexer reads every character of up to 256 KiB of hostile text on the serving thread
const isDigit = (code: number) => code >= 48 && code <= 57
const isIdentStart = (code: number) => (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code === 36
const isIdentPart = (code: number) => isIdentStart(code) || isDigit(code)

/** Where an offset is, as "line L, column C". */
export function positionOf(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++
      lineStart = i + 1
    }
  }
  return { line, column: offset - lineStart + 1 }
}

/** `deadline`: a `performance.now()` past which tokenizing stops (checked every few thousand tokens). */
export function tokenize(text: string, maxTokens: number, deadline?: number): Token[] {
  const tokens: Token[] = []
  let i = 0
  let line = 1
  let lineStart = 0
  const fail = (message: string, at: number): never => {
    const p = positionOf(text, at)
    throw new QueryError(`${message} at line ${p.line}, column ${p.column}`)
  }
  let startLine = 1
  let startLineStart = 0
  const push = (kind: TokenKind, value: string, start: number) => {
    if (tokens.length >= maxTokens) {
      const p = positionOf(text, start)
      throw new QueryLimitError(`The query has more than ${maxTokens} tokens (at line ${p.line}, column ${p.column})`, 'tokens')
    }
    if ((tokens.length & 4095) === 4095) checkDeadline(deadline)
    tokens.push({ kind, text: value, offset: start, end: i, line: startLine, column: start - startLineStart + 1 })
  }
  while (i < text.length) {
    const c = text[i]
    if (c === '\n') {
      i++
      line++
      lineStart = i
      continue
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++
      continue
    }
    if (c === '-' && text[i + 1] === '-') {
      while (i < text.length && text[i] !== '\n') i++
      continue
    }
    const start = i
    startLine = line
    startLineStart = lineStart
    const code = text.charCodeAt(i)
    if (isIdentStart(code)) {
      while (i < text.length && isIdentPart(text.charCodeAt(i))) i++
      push('ident', text.slice(start, i), start)
      continue
    }
    if (isDigit(code)) {
      while (isDigit(text.charCodeAt(i))) i++
      if (text[i] === '.' && isDigit(text.charCodeAt(i + 1))) {
        i++
        while (isDigit(text.charCodeAt(i))) i++
      }
      if ((text[i] === 'e' || text[i] === 'E') && (isDigit(text.charCodeAt(i + 1)) || text[i + 1] === '+' || text[i + 1] === '-')) {
        i++
        if (text[i] === '+' || text[i] === '-') i++
        if (!isDigit(text.charCodeAt(i))) fail('Malformed number', start)
        while (isDigit(text.charCodeAt(i))) i++
      }
      if (i < text.length && isIdentPart(text.charCodeAt(i))) fail('Malformed number', start)
      push('number', text.slice(start, i), start)
      continue
    }
    if (c === "'" || c === '`' || c === '"') {
      // 'string' with \-escapes or a doubled quote; `identifier` and "identifier" likewise
      i++
      let value = ''
      for (;;) {
        if (i >= text.length) fail(c === "'" ? 'Unterminated string' : 'Unterminated quoted identifier', start)
        const ch = text[i]
        if (ch === '\\') {
          const next = text[i + 1]
          if (next === undefined) fail('Unterminated string', start)
          value += ESCAPES[next] ?? next
          i += 2
          continue
        }
        if (ch === c) {
          if (text[i + 1] === c) {
            value += c
            i += 2
            continue
          }
          i++
          break
        }
        if (ch === '\n') {
          line++
          lineStart = i + 1
        }
        // the run of plain characters up to the next escape, quote or newline, in one piece
        let to = i + 1
        while (to < text.length && text[to] !== '\\' && text[to] !== c && text[to] !== '\n') to++
        value += text.slice(i, to)
        i = to
      }
      push(c === "'" ? 'string' : 'quoted', value, start)
      continue
    }
    const pair = text.slice(i, i + 2)
    const op = TWO_CHARACTER_OPERATORS.has(pair) ? pair : OPERATORS.has(c) ? c : null
    if (op === null) fail(`Unexpected character ${JSON.stringify(c)}`, start)
    i += op!.length
    push('op', op!, start)
  }
  tokens.push({ kind: 'eof', text: '', offset: text.length, end: text.length, line, column: text.length - lineStart + 1 })
  return tokens
}
