// What the function compilers share (functions.ts, aggregates.ts): how an argument is compiled and checked (its
// count, a literal's value, a condition), and a value as text the same on every store.
import type { Expr } from './ast'
import { type Compiled, type Compiler } from './compile'
import { QueryError } from './errors'

export type Want = 'any' | 'raw' | 'string' | 'number'
/** Compiles an argument; `acceptArray`: this function takes an array there (elsewhere one is refused). */
export type Arg = (e: Expr, want: Want, acceptArray?: boolean) => Compiled
export type Call = Extract<Expr, { k: 'call' }>

export interface Resolved {
  /** the name as this catalogue spells it (sumIf for SUMIF) */
  name: string
  /** without the -If */
  base: string
  combinator: boolean
  aggregate: boolean
}

export function arity(name: string, args: Expr[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`
    throw new QueryError(`${name}() takes ${want} argument${min === 1 && max === 1 ? '' : 's'}, not ${args.length}`)
  }
}

export const isTime = (c: Compiled) => c.type === 'DateTime' || c.type === 'Date'
export const isNumber = (c: Compiled) => c.type === 'Int' || c.type === 'Float' || c.type === 'Bool'

/** A number written in the query (a sign allowed), or null. */
export function literalNumber(e: Expr): number | null {
  if (e.k === 'number') return e.value
  if (e.k === 'unary' && e.op === '-' && e.arg.k === 'number') return -e.arg.value
  return null
}

/** A whole number written in the query within [min, max], or a refusal naming the function and what it is. */
export function wholeLiteral(name: string, e: Expr | undefined, what: string, min: number, max: number): number {
  const n = e ? literalNumber(e) : null
  if (n === null || !Number.isInteger(n) || n < min || n > max) throw new QueryError(`${name}() takes ${what} as a whole number from ${min} to ${max}`)
  return n
}

/** A string written in the query, or a refusal naming the function and what it is. */
export function stringLiteral(name: string, e: Expr | undefined, what: string): string {
  if (e?.k !== 'string') throw new QueryError(`${name}() takes ${what} as a string literal`)
  return e.value
}

/** A condition (of -If, multiIf): a boolean, or a number taken as true when not 0, as ClickHouse does. */
export function condition(name: string, c: Compiled): Compiled {
  if (c.type === 'Bool' || c.type === 'Null') return c
  if (c.type === 'Int' || c.type === 'Float') return { ...c, sql: `(${c.sql} != 0)`, type: 'Bool' }
  throw new QueryError(`${name}() takes a condition there, not a ${c.type === 'JSON' ? 'property' : c.type}`)
}

/**
 * Text as SQLite's JSON functions take it: a property read as text may be SQLite's JSON of it (`->`), which they
 * would take as JSON (a number, an object) rather than as a string; a concatenation is plain text.
 */
export function jsonPlain(compiler: Compiler, sql: string): string {
  return compiler.dialect === 'sqlite' ? `(${sql} || '')` : sql
}

/**
 * A value as text, the same on every store (times as YYYY-MM-DD hh:mm:ss in UTC: ClickHouse prints a time in its
 * column's zone, UTC here; formatDateTime's %M is minutes on 18.16 and the month's name on current servers).
 */
export function asText(compiler: Compiler, c: Compiled): string {
  const sqlite = compiler.dialect === 'sqlite'
  if (c.type === 'String' || c.type === 'JSON' || c.type === 'UUID' || c.type === 'Null') return c.sql
  if (compiler.dialect === 'duckdb') {
    if (c.type === 'DateTime') return `strftime(epoch_ms(${c.sql}), '%Y-%m-%d %H:%M:%S')`
    if (c.type === 'Date') return `strftime(epoch_ms(${c.sql}), '%Y-%m-%d')`
    // a boolean as 0 or 1, as on the other stores
    return c.type === 'Bool' ? `CAST(CAST(${c.sql} AS INTEGER) AS VARCHAR)` : `CAST(${c.sql} AS VARCHAR)`
  }
  if (c.type === 'DateTime') return sqlite ? `strftime('%Y-%m-%d %H:%M:%S', ${c.sql} / 1000, 'unixepoch')` : `substring(toString(${c.sql}), 1, 19)`
  if (c.type === 'Date') return sqlite ? `strftime('%Y-%m-%d', ${c.sql} / 1000, 'unixepoch')` : `toString(${c.sql})`
  return sqlite ? `CAST(${c.sql} AS TEXT)` : `toString(${c.sql})`
}
