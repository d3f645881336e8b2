// Trends formulas over series (`A + B`, `(A - B) / A * 100`): letters name the series in order, numbers, + − × ÷
// and parentheses. Parsed once, evaluated per bucket; a division by zero gives 0, as PostHog shows it.
import { unsupported } from './hogql'

export type Formula = { k: 'n'; value: number } | { k: 'series'; index: number } | { k: 'neg'; arg: Formula } | { k: 'op'; op: '+' | '-' | '*' | '/'; left: Formula; right: Formula }

const MAX_LENGTH = 1000
const MAX_DEPTH = 32

export function parseFormula(text: string, seriesCount: number, attr: string): Formula {
  if (text.length > MAX_LENGTH) unsupported(`A formula is at most ${MAX_LENGTH} characters`, attr)
  const tokens = text.toUpperCase().match(/\d+(?:\.\d+)?|[A-Z]|[-+*/()]|\S/g) ?? []
  let at = 0
  const fail = (why: string): never => unsupported(`Formula "${text.slice(0, 100)}": ${why}`, attr)
  const expr = (depth: number): Formula => {
    if (depth > MAX_DEPTH) fail('nested too deeply')
    let left = term(depth)
    while (tokens[at] === '+' || tokens[at] === '-') {
      const op = tokens[at++] as '+' | '-'
      left = { k: 'op', op, left, right: term(depth) }
    }
    return left
  }
  const term = (depth: number): Formula => {
    let left = factor(depth)
    while (tokens[at] === '*' || tokens[at] === '/') {
      const op = tokens[at++] as '*' | '/'
      left = { k: 'op', op, left, right: factor(depth) }
    }
    return left
  }
  const factor = (depth: number): Formula => {
    const token = tokens[at++]
    if (token === undefined) return fail('ends too early')
    if (token === '-') return { k: 'neg', arg: factor(depth + 1) }
    if (token === '(') {
      const inner = expr(depth + 1)
      if (tokens[at++] !== ')') fail('a parenthesis is not closed')
      return inner
    }
    if (/^\d/.test(token)) return { k: 'n', value: Number(token) }
    if (/^[A-Z]$/.test(token)) {
      const index = token.charCodeAt(0) - 65
      if (index >= seriesCount) fail(`there is no series ${token}`)
      return { k: 'series', index }
    }
    return fail(`unexpected "${token}"`)
  }
  const tree = expr(0)
  if (at < tokens.length) fail(`unexpected "${tokens[at]}"`)
  return tree
}

export function evaluateFormula(f: Formula, series: readonly number[]): number {
  switch (f.k) {
    case 'n':
      return f.value
    case 'series':
      return series[f.index] ?? 0
    case 'neg':
      return -evaluateFormula(f.arg, series)
    case 'op': {
      const a = evaluateFormula(f.left, series)
      const b = evaluateFormula(f.right, series)
      if (f.op === '+') return a + b
      if (f.op === '-') return a - b
      if (f.op === '*') return a * b
      return b === 0 ? 0 : a / b
    }
  }
}
