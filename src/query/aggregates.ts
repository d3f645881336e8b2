// Aggregates (count, uniq, sum, avg, min, max, any, argMin/argMax, groupArray, quantiles) and their -If combinator,
// each written for every store so that it gives the same value everywhere (docs/query.md "Functions").
import type { Expr } from './ast'
import { combine, type Compiled, type Compiler, type ElementType, type ValueType } from './compile'
import { isEmbedded, numberSql } from './dialect'
import { QueryError } from './errors'
import { arity, asText, condition, isNumber, jsonPlain, literalNumber, wholeLiteral, type Arg, type Call, type Resolved, type Want } from './function-args'

/** Aggregates, with -If (the condition last): the values of the other rows are made NULL, which each leaves out. */
/** null: no aggregate of that name (the caller refuses it). */
export function compileAggregate(compiler: Compiler, r: Resolved, e: Call, arg: Arg): Compiled | null {
  const name = r.name
  const base = r.base
  const embedded = isEmbedded(compiler.dialect)
  const sqlite = compiler.dialect === 'sqlite'
  const duck = compiler.dialect === 'duckdb'
  let args = e.args
  let cond: Compiled | null = null
  if (r.combinator) {
    if (e.distinct || e.star) throw new QueryError(`${name}() takes neither * nor DISTINCT`)
    if (args.length === 0) throw new QueryError(`${name}() takes its condition as its last argument`)
    cond = condition(name, arg(args[args.length - 1], 'any'))
    args = args.slice(0, -1)
  }
  const agg = (sql: string, type: ValueType, parts: Compiled[]): Compiled => ({ ...combine(parts, sql, type), agg: true, loose: null })
  const masked = (c: Compiled): Compiled => {
    if (!cond) return c
    return combine([c, cond], embedded ? `(CASE WHEN ${cond.sql} THEN ${c.sql} END)` : `if(${cond.sql}, ${c.sql}, NULL)`, c.type)
  }
  /** the value of an argument, masked by the condition, refused when it is an array */
  const value = (x: Expr, want: Want) => masked(arg(x, want))
  /** a number (ClickHouse refuses to add up text or times; SQLite would take text as 0) */
  const numeric = (c: Compiled): Compiled => {
    if (!isNumber(c) && c.type !== 'Null') throw new QueryError(`${name}() takes numbers, not a ${c.type}`)
    return c
  }
  const params = e.params ?? []
  const exact = (c: Compiled) => (embedded ? `count(DISTINCT ${c.sql})` : `ifNull(uniqExact(${c.sql}), 0)`)

  switch (base) {
    case 'count': {
      if (!r.combinator && (e.star || args.length === 0)) return agg(embedded ? 'count(*)' : 'count()', 'Int', [])
      if (r.combinator && args.length === 0) {
        const one = masked({ sql: '1', type: 'Int', agg: false, loose: null })
        return agg(`count(${one.sql})`, 'Int', [one, ...(cond ? [cond] : [])])
      }
      arity(name, args, 1)
      const a = value(args[0], 'any')
      // over nothing but NULLs ClickHouse 18.16 answers NULL where SQL (and current ClickHouse) answer 0
      if (e.distinct) return agg(exact(a), 'Int', [a])
      return agg(`count(${a.sql})`, 'Int', [a])
    }
    case 'uniq':
    case 'uniqExact': {
      arity(name, args, 1)
      // exact on every store, so that every store gives the same number
      const a = value(args[0], 'any')
      return agg(exact(a), 'Int', [a])
    }
    case 'sum': {
      arity(name, args, 1)
      const a = numeric(value(args[0], 'number'))
      const type = a.type === 'Int' || a.type === 'Bool' ? 'Int' : 'Float'
      const summed = duck && a.type === 'Bool' ? `CAST(${a.sql} AS INTEGER)` : a.sql
      return agg(embedded ? `coalesce(sum(${summed}), 0)` : `ifNull(sum(${a.sql}), 0)`, type, [a])
    }
    case 'avg': {
      arity(name, args, 1)
      const a = numeric(value(args[0], 'number'))
      return agg(`avg(${a.sql})`, 'Float', [a])
    }
    case 'min':
    case 'max':
    case 'any': {
      arity(name, args, 1)
      const a = value(args[0], 'number')
      // any(): the least value on every store, so that every store gives the same row
      return agg(`${base === 'max' ? 'max' : 'min'}(${a.sql})`, a.type === 'Null' ? 'Null' : a.type, [a])
    }
    case 'argMin':
    case 'argMax':
      arity(name, args, 2)
      return argExtreme(compiler, base === 'argMax', value(args[0], 'string'), value(args[1], 'number'), name)
    case 'groupArray': {
      arity(name, args, 1)
      if (params.length > 1) throw new QueryError(`${name}() takes one parameter at most: its largest size, ${name}(n)(x)`)
      const size = params.length ? wholeLiteral(name, params[0], 'its largest size (the parameter)', 1, MAX_ARRAY) : MAX_ARRAY
      const a = value(args[0], 'string')
      const element: ElementType = a.type === 'Int' || a.type === 'Bool' ? 'Int' : a.type === 'Float' ? 'Float' : 'String'
      // numbers stay numbers; anything else is its text (times as YYYY-MM-DD hh:mm:ss, as toString writes them)
      const x = element === 'String' ? jsonPlain(compiler, asText(compiler, a)) : duck && a.type === 'Bool' ? `CAST(${a.sql} AS BIGINT)` : a.sql
      // the values in order (ClickHouse's are in the order its threads met them), NULLs left out, the least `size`
      let sql: string
      if (sqlite) sql = `(SELECT json_group_array(value ORDER BY key) FROM json_each(json_group_array(${x} ORDER BY ${x}) FILTER (WHERE ${x} IS NOT NULL)) WHERE key < ${size})`
      else if (duck) sql = `coalesce((list(${x} ORDER BY ${x}) FILTER (WHERE ${x} IS NOT NULL))[1:${size}], CAST([] AS ${element === 'String' ? 'VARCHAR' : element === 'Int' ? 'BIGINT' : 'DOUBLE'}[]))`
      else sql = `arraySlice(arraySort(groupArray(${x})), 1, ${size})`
      return { ...agg(sql, 'JSON', [a]), array: element }
    }
    case 'median':
    case 'quantile':
    case 'quantileExact':
    case 'quantiles':
    case 'quantilesExact': {
      arity(name, args, 1)
      const many = base === 'quantiles' || base === 'quantilesExact'
      if (base === 'median' && params.length) throw new QueryError('median() takes no parameters (quantile(p)(x) does)')
      if (!many && params.length > 1) throw new QueryError(`${name}() takes one level, ${name}(p)(x) (quantiles(p1, p2, …)(x) takes more)`)
      if (many && params.length === 0) throw new QueryError(`${name}() takes its levels as parameters: ${name}(0.5, 0.9)(x)`)
      if (params.length > MAX_QUANTILES) throw new QueryError(`${name}() takes at most ${MAX_QUANTILES} levels, not ${params.length}`)
      const levels = params.length ? params.map((p) => {
        const n = literalNumber(p)
        if (n === null || !(n >= 0 && n <= 1)) throw new QueryError(`${name}() takes levels as numbers from 0 to 1`)
        return n
      }) : [0.5]
      const a = numeric(value(args[0], 'number'))
      return quantiles(compiler, a, levels, many)
    }
  }
  return null
}

/** The most elements an array of groupArray holds (docs/query.md "Arrays"). */
export const MAX_ARRAY = 10_000
/** The most levels one quantiles() computes. */
export const MAX_QUANTILES = 20

/**
 * quantile(p)(x): ClickHouse's quantileExact, on every store. The values (NULLs left out) sorted; the one at the
 * 0-based position floor(p × n) as a double computes it, the last when p is 1; no interpolation, so it is always
 * one of the values. NULL over no values; quantiles(…) gives [] there (ClickHouse has no NULL array).
 */
function quantiles(compiler: Compiler, a: Compiled, levels: number[], many: boolean): Compiled {
  const dialect = compiler.dialect
  const duck = dialect === 'duckdb'
  const x = duck && a.type === 'Bool' ? `CAST(${a.sql} AS BIGINT)` : a.sql
  const type: ValueType = many || a.type === 'Float' ? 'Float' : a.type === 'Null' ? 'Null' : 'Int'
  const level = (p: number) => numberSql(p) + (Number.isInteger(p) ? '.0' : '')
  let sql: string
  if (dialect === 'sqlite') {
    const value = many ? `CAST(${x} AS REAL)` : x
    const at = (p: number) => `_qv ->> ('$[' || ${p >= 1 ? '_qn - 1' : `CAST(${level(p)} * _qn AS INTEGER)`} || ']')`
    const picked = many ? `CASE WHEN _qn = 0 THEN '[]' ELSE json_array(${levels.map(at).join(', ')}) END` : at(levels[0])
    // the sorted values once, each level read from them
    sql = `(SELECT ${picked} FROM (SELECT json_group_array(${value} ORDER BY ${x}) FILTER (WHERE ${x} IS NOT NULL) AS _qv, count(${x}) AS _qn))`
  } else if (duck) {
    const value = many ? `CAST(${x} AS DOUBLE)` : x
    // DuckDB reads 0.9 as a DECIMAL: the level is a double, as on the other stores
    const at = (p: number) => (p >= 1 ? `count(${x})` : `CAST(floor(CAST(${level(p)} AS DOUBLE) * count(${x})) AS BIGINT) + 1`)
    const sorted = `list_sort(list(${value}) FILTER (WHERE ${x} IS NOT NULL))`
    sql = many ? `coalesce(list_select(${sorted}, [${levels.map(at).join(', ')}]), CAST([] AS DOUBLE[]))` : `${sorted}[${at(levels[0])}]`
  } else {
    const list = levels.map(level).join(', ')
    sql = many
      ? `if(count(${x}) = 0, emptyArrayFloat64(), quantilesExact(${list})(toFloat64(${x})))`
      : `if(count(${x}) = 0, NULL, quantileExact(${list})(${x}))`
  }
  const compiled = { ...combine([a], sql, many ? 'JSON' : type), agg: true, loose: null }
  return many ? { ...compiled, array: 'Float' } : compiled
}

/**
 * argMin(a, v) / argMax(a, v): the a of the row with the least / greatest v. Ties are settled by a (the least a
 * for argMin, the greatest for argMax: the least or greatest pair (v, a)), so every store picks the same row
 * (ClickHouse's own picks whichever its threads met first); rows where a or v is NULL are left out; NULL over none.
 */
function argExtreme(compiler: Compiler, greatest: boolean, a: Compiled, v: Compiled, name: string): Compiled {
  const dialect = compiler.dialect
  const both = `${a.sql} IS NOT NULL AND ${v.sql} IS NOT NULL`
  const fn = greatest ? 'max' : 'min'
  const out = (sql: string): Compiled => ({ ...combine([a, v], sql, a.type), agg: true, loose: null })
  if (a.type === 'JSON' || v.type === 'JSON') throw new QueryError(`${name}() takes values, not raw properties`)
  if (dialect === 'duckdb') {
    const av = a.type === 'Bool' ? `CAST(${a.sql} AS BIGINT)` : a.sql
    const vv = v.type === 'Bool' ? `CAST(${v.sql} AS BIGINT)` : v.sql
    const picked = `struct_extract(${fn}(struct_pack(v := ${vv}, a := ${av})) FILTER (WHERE ${both}), 'a')`
    return out(a.type === 'Bool' ? `CAST(${picked} AS BOOLEAN)` : picked)
  }
  if (dialect === 'sqlite') {
    const whole = (c: Compiled) => c.type === 'Int' || c.type === 'Bool' || c.type === 'DateTime' || c.type === 'Date'
    if (whole(v) && (whole(a) || a.type === 'String' || a.type === 'UUID')) {
      // the pair as one text that sorts as the pair does (v, then a): SQLite's max() of it, no sorting of the rows
      const key = `(CASE WHEN ${both} THEN ${sortableInteger(v.sql)} || ${whole(a) ? sortableInteger(a.sql) : a.sql} END)`
      const k = `${fn}(${key})`
      return out(whole(a) ? integerFromSortable(`substr(${k}, 21)`) : `substr(${k}, 21)`)
    }
    // otherwise the rows' a in the order of the pairs (SQLite sorts them: slower, docs/query.md)
    const value = a.type === 'String' || a.type === 'UUID' ? jsonPlain(compiler, a.sql) : a.sql
    return out(`(json_group_array(${value} ORDER BY ${v.sql} ${greatest ? 'DESC' : 'ASC'}, ${a.sql} ${greatest ? 'DESC' : 'ASC'}) FILTER (WHERE ${both}) ->> '$[0]')`)
  }
  // ClickHouse: the least or greatest tuple; its -If leaves the other rows out, count says whether there was one
  const mask = `isNotNull(${a.sql}) AND isNotNull(${v.sql})`
  return out(`if(countIf(${mask}) = 0, NULL, tupleElement(${fn}If(tuple(${v.sql}, ${a.sql}), ${mask}), 2))`)
}

/** A 64-bit integer as 20 characters that sort as it does: a sign character ('0' below zero, '1' from it) and 19 digits. */
function sortableInteger(sql: string): string {
  return `(CASE WHEN ${sql} < 0 THEN '0' || printf('%019d', ${sql} + 9223372036854775807 + 1) ELSE '1' || printf('%019d', ${sql}) END)`
}

function integerFromSortable(sql: string): string {
  return `(CASE WHEN substr(${sql}, 1, 1) = '1' THEN CAST(substr(${sql}, 2) AS INTEGER) ELSE CAST(substr(${sql}, 2) AS INTEGER) - 9223372036854775807 - 1 END)`
}
