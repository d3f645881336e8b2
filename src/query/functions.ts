// The functions a query may call (DESIGN.md "Query API"), each written for every store so that it gives the same
// values everywhere. Anything not listed here is refused by name.
import type { Expr } from './ast'
import { fitsStatement } from './budget'
import { combine, parseTimeLiteral, shift, type Compiled, type Compiler, type ValueType } from './compile'
import { asciiCase, DAY_MS, isEmbedded, timeLiteral } from './dialect'
import { QueryError } from './errors'

type Arg = (e: Expr, want: 'any' | 'raw' | 'string' | 'number') => Compiled

const AGGREGATES = new Set(['count', 'uniq', 'sum', 'avg', 'min', 'max', 'any'])
const SCALARS = new Set([
  'toStartOfHour', 'toStartOfDay', 'toStartOfWeek', 'toStartOfMonth', 'toDate', 'toDateTime', 'now', 'today',
  'dateDiff', 'lower', 'upper', 'length', 'concat', 'substring', 'coalesce', 'ifNull', 'if', 'round', 'toString',
  'toInt', 'toFloat',
])
const BY_LOWER = new Map([...AGGREGATES, ...SCALARS].map((n) => [n.toLowerCase(), n]))

/** The function's canonical name (names are matched without regard to case), or a refusal naming it. */
export function canonicalName(name: string): string {
  const known = BY_LOWER.get(name.toLowerCase())
  if (!known) throw new QueryError(`Unknown function ${name}()`)
  return known
}

export function isAggregate(name: string): boolean {
  return AGGREGATES.has(BY_LOWER.get(name.toLowerCase()) ?? '')
}

function arity(name: string, args: Expr[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`
    throw new QueryError(`${name}() takes ${want} argument${min === 1 && max === 1 ? '' : 's'}, not ${args.length}`)
  }
}

const isTime = (c: Compiled) => c.type === 'DateTime' || c.type === 'Date'
const isNumber = (c: Compiled) => c.type === 'Int' || c.type === 'Float' || c.type === 'Bool'

export function compileCall(compiler: Compiler, e: Extract<Expr, { k: 'call' }>, arg: Arg): Compiled {
  const name = canonicalName(e.name)
  // the embedded stores (SQLite, DuckDB) share most of their SQL; `div` is their integer division
  const embedded = isEmbedded(compiler.dialect)
  const duck = compiler.dialect === 'duckdb'
  const div = duck ? '//' : '/'
  if (e.distinct && name !== 'count') throw new QueryError(`DISTINCT is only allowed in count(DISTINCT …), not in ${name}()`)
  if (e.star && name !== 'count') throw new QueryError(`${name}(*) is not allowed`)
  const agg = (sql: string, type: ValueType, parts: Compiled[] = []): Compiled => ({ ...combine(parts, sql, type), agg: true, loose: null })
  const args = e.args

  /** a time argument: a time column or expression, or a literal folded to a constant */
  const timeArg = (x: Expr): Compiled => asTime(arg(x, 'any'))
  const asTime = (c: Compiled): Compiled => {
    if (isTime(c)) return c
    if (c.literal !== undefined) {
      const ms = parseTimeLiteral(c.literal)
      return { sql: timeLiteral(compiler.dialect, ms, 'DateTime'), type: 'DateTime', agg: false, loose: null, time: ms }
    }
    throw new QueryError(`${name}() expects a date or time`)
  }
  const fold = (c: Compiled, f: (ms: number) => number, type: 'DateTime' | 'Date'): Compiled | null => {
    if (c.time === undefined) return null
    const ms = f(c.time)
    return { sql: timeLiteral(compiler.dialect, ms, type), type, agg: false, loose: null, time: ms }
  }

  switch (name) {
    case 'count': {
      if (e.star || args.length === 0) return agg(embedded ? 'count(*)' : 'count()', 'Int')
      arity(name, args, 1)
      const a = arg(args[0], 'any')
      // over nothing but NULLs ClickHouse 18.16 answers NULL where SQL (and current ClickHouse) answer 0
      if (e.distinct) return agg(embedded ? `count(DISTINCT ${a.sql})` : `ifNull(uniqExact(${a.sql}), 0)`, 'Int', [a])
      return agg(`count(${a.sql})`, 'Int', [a])
    }
    case 'uniq': {
      arity(name, args, 1)
      const a = arg(args[0], 'any')
      // exact on every store, so that every store gives the same number
      return agg(embedded ? `count(DISTINCT ${a.sql})` : `ifNull(uniqExact(${a.sql}), 0)`, 'Int', [a])
    }
    case 'sum': {
      arity(name, args, 1)
      const a = arg(args[0], 'number')
      const type = a.type === 'Int' || a.type === 'Bool' ? 'Int' : 'Float'
      const summed = duck && a.type === 'Bool' ? `CAST(${a.sql} AS INTEGER)` : a.sql
      return agg(embedded ? `coalesce(sum(${summed}), 0)` : `ifNull(sum(${a.sql}), 0)`, type, [a])
    }
    case 'avg': {
      arity(name, args, 1)
      const a = arg(args[0], 'number')
      return agg(`avg(${a.sql})`, 'Float', [a])
    }
    case 'min':
    case 'max':
    case 'any': {
      arity(name, args, 1)
      const a = arg(args[0], 'number')
      // any(): the least value on every store, so that every store gives the same row
      return agg(`${name === 'max' ? 'max' : 'min'}(${a.sql})`, a.type === 'Null' ? 'Null' : a.type, [a])
    }
    case 'now':
      arity(name, args, 0)
      return { sql: timeLiteral(compiler.dialect, compiler.now, 'DateTime'), type: 'DateTime', agg: false, loose: null, time: compiler.now }
    case 'today': {
      arity(name, args, 0)
      const ms = Math.floor(compiler.now / DAY_MS) * DAY_MS
      return { sql: timeLiteral(compiler.dialect, ms, 'Date'), type: 'Date', agg: false, loose: null, time: ms }
    }
    case 'toStartOfHour':
    case 'toStartOfDay': {
      arity(name, args, 1)
      const a = timeArg(args[0])
      const unit = name === 'toStartOfHour' ? 3_600_000 : DAY_MS
      const folded = fold(a, (ms) => Math.floor(ms / unit) * unit, 'DateTime')
      if (folded) return folded
      if (embedded) return { ...a, sql: `((${a.sql} ${div} ${unit}) * ${unit})`, type: 'DateTime' }
      const base = a.type === 'Date' ? compiler.dateToDateTime(a.sql) : a.sql
      return { ...a, sql: `${name}(${base})`, type: 'DateTime' }
    }
    case 'toStartOfWeek': {
      arity(name, args, 1)
      const a = timeArg(args[0])
      // weeks start on Sunday (ClickHouse's default mode); 1970-01-01 was a Thursday
      const folded = fold(a, (ms) => { const d = Math.floor(ms / DAY_MS); return (d - ((d % 7) + 11) % 7) * DAY_MS }, 'Date')
      if (folded) return folded
      if (embedded) return { ...a, sql: `(((${a.sql} ${div} ${DAY_MS}) - (((${a.sql} ${div} ${DAY_MS}) + 4) % 7)) * ${DAY_MS})`, type: 'Date' }
      return { ...a, sql: `(toDate(${a.sql}) - (toDayOfWeek(${a.sql}) % 7))`, type: 'Date' }
    }
    case 'toStartOfMonth': {
      arity(name, args, 1)
      const a = timeArg(args[0])
      const folded = fold(a, (ms) => { const d = new Date(ms); return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) }, 'Date')
      if (folded) return folded
      if (duck) return { ...a, sql: `epoch_ms(date_trunc('month', epoch_ms(${a.sql})))`, type: 'Date' }
      if (embedded) return { ...a, sql: `(CAST(strftime('%s', ${a.sql} / 1000, 'unixepoch', 'start of month') AS INTEGER) * 1000)`, type: 'Date' }
      return { ...a, sql: `toStartOfMonth(${a.sql})`, type: 'Date' }
    }
    case 'toDate': {
      arity(name, args, 1)
      const a = timeArg(args[0])
      const folded = fold(a, (ms) => Math.floor(ms / DAY_MS) * DAY_MS, 'Date')
      if (folded) return folded
      if (embedded) return { ...a, sql: `((${a.sql} ${div} ${DAY_MS}) * ${DAY_MS})`, type: 'Date' }
      return { ...a, sql: `toDate(${a.sql})`, type: 'Date' }
    }
    case 'toDateTime': {
      arity(name, args, 1)
      const raw = arg(args[0], 'any')
      if (isNumber(raw) && raw.literal === undefined) {
        // seconds since the epoch
        const seconds = duck ? `(CAST(trunc(${raw.sql}) AS BIGINT) * 1000)` : `(CAST(${raw.sql} AS INTEGER) * 1000)`
        return { ...raw, sql: embedded ? seconds : `toDateTime(toUInt32(${raw.sql}), 'UTC')`, type: 'DateTime' }
      }
      const a = asTime(raw) // compiled once: toDateTime(toDateTime(…)) must not compile its argument 2^n times
      const folded = fold(a, (ms) => ms, 'DateTime')
      if (folded) return folded
      return a.type === 'Date' ? { ...a, sql: compiler.dateToDateTime(a.sql), type: 'DateTime' } : a
    }
    case 'dateDiff': {
      arity(name, args, 3)
      if (args[0].k !== 'string') throw new QueryError("dateDiff() takes the unit as a string: 'second', 'minute', 'hour', 'day', 'week', 'month' or 'year'")
      const unit = args[0].value.toLowerCase()
      if (!['second', 'minute', 'hour', 'day', 'week', 'month', 'year'].includes(unit)) throw new QueryError(`dateDiff() does not know the unit '${args[0].value}'`)
      const [a, b] = [timeArg(args[1]), timeArg(args[2])]
      if (!embedded) {
        const dt = (c: Compiled) => (c.type === 'Date' ? compiler.dateToDateTime(c.sql) : c.sql)
        return combine([a, b], `dateDiff(${compiler.params.string(unit)}, ${dt(a)}, ${dt(b)})`, 'Int')
      }
      const fixed: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: DAY_MS }
      let sql: string
      if (fixed[unit]) sql = `((${b.sql} ${div} ${fixed[unit]}) - (${a.sql} ${div} ${fixed[unit]}))`
      // weeks are counted from Mondays (ClickHouse's relative week number); 1969-12-29 was a Monday
      else if (unit === 'week') sql = `(((${b.sql} ${div} ${DAY_MS}) + 3) ${div} 7 - ((${a.sql} ${div} ${DAY_MS}) + 3) ${div} 7)`
      else {
        const months = duck
          ? (x: string) => `(year(epoch_ms(${x})) * 12 + month(epoch_ms(${x})) - 1)`
          : (x: string) => `(CAST(strftime('%Y', ${x} / 1000, 'unixepoch') AS INTEGER) * 12 + CAST(strftime('%m', ${x} / 1000, 'unixepoch') AS INTEGER))`
        sql = unit === 'month' ? `(${months(b.sql)} - ${months(a.sql)})` : `(${months(b.sql)} ${div} 12 - ${months(a.sql)} ${div} 12)`
      }
      return combine([a, b], sql, 'Int')
    }
    case 'lower':
    case 'upper': {
      arity(name, args, 1)
      const a = arg(args[0], 'string')
      // ASCII only on both stores (ClickHouse's lower/upper and SQLite's agree)
      return { ...a, sql: asciiCase(compiler.dialect, a.sql, name), type: 'String' }
    }
    case 'length': {
      arity(name, args, 1)
      const a = arg(args[0], 'string')
      return { ...a, sql: embedded ? `length(${asText(compiler, a)})` : `lengthUTF8(${asText(compiler, a)})`, type: 'Int' }
    }
    case 'concat': {
      arity(name, args, 1, 100)
      const parts = args.map((x) => arg(x, 'string'))
      const texts = parts.map((p) => asText(compiler, p))
      fitsStatement(texts)
      return combine(parts, embedded ? `(${texts.join(' || ')})` : `concat(${texts.length === 1 ? `${texts[0]}, ''` : texts.join(', ')})`, 'String')
    }
    case 'substring': {
      arity(name, args, 2, 3)
      const parts = [arg(args[0], 'string'), ...args.slice(1).map((x) => arg(x, 'number'))]
      const texts = [asText(compiler, parts[0]), ...parts.slice(1).map((p) => p.sql)]
      fitsStatement(texts)
      const list = texts.join(', ')
      return combine(parts, embedded ? `substr(${list})` : `substringUTF8(${list})`, 'String')
    }
    case 'coalesce':
    case 'ifNull': {
      arity(name, args, name === 'ifNull' ? 2 : 1, name === 'ifNull' ? 2 : 100)
      const parts = args.map((x) => arg(x, 'string'))
      const type = parts.find((p) => p.type !== 'Null')?.type ?? 'Null'
      fitsStatement(parts.map((p) => p.sql))
      return combine(parts, `coalesce(${parts.map((p) => p.sql).join(', ')})`, type)
    }
    case 'if': {
      arity(name, args, 3)
      const parts = [arg(args[0], 'any'), arg(args[1], 'string'), arg(args[2], 'string')]
      const type = parts[1].type !== 'Null' ? parts[1].type : parts[2].type
      const [c, a, b] = parts.map((p) => p.sql)
      return combine(parts, embedded ? `(CASE WHEN ${c} THEN ${a} ELSE ${b} END)` : `if(${c}, ${a}, ${b})`, type)
    }
    case 'round': {
      arity(name, args, 1, 2)
      const a = arg(args[0], 'number')
      if (args[1] && (args[1].k !== 'number' || !Number.isInteger(args[1].value))) throw new QueryError('round() takes a whole number of decimals')
      const places = args[1] ? (args[1] as { value: number }).value : 0
      return { ...a, sql: `round(${a.sql}, ${places})`, type: places > 0 || a.type === 'Float' ? 'Float' : a.type }
    }
    case 'toString': {
      arity(name, args, 1)
      const a = arg(args[0], 'string')
      return { ...a, sql: asText(compiler, a), type: 'String' }
    }
    case 'toInt':
    case 'toFloat': {
      arity(name, args, 1)
      const a = arg(args[0], 'string')
      const type: ValueType = name === 'toInt' ? 'Int' : 'Float'
      if (duck) {
        if (a.type === 'String' || a.type === 'JSON') {
          // text that is not a number is NULL (as ClickHouse's *OrNull); a fraction's integer part, as SQLite's
          const number = `TRY_CAST(trim(${a.sql}) AS DOUBLE)`
          return { ...a, sql: name === 'toInt' ? `COALESCE(TRY_CAST(trim(${a.sql}) AS BIGINT), CAST(trunc(${number}) AS BIGINT))` : number, type }
        }
        if (isTime(a)) return { ...a, sql: name === 'toInt' ? `(${a.sql} // 1000)` : `(${a.sql} / 1000)`, type }
        if (a.type === 'Bool') return { ...a, sql: `CAST(${a.sql} AS ${name === 'toInt' ? 'BIGINT' : 'DOUBLE'})`, type }
        return { ...a, sql: name === 'toInt' ? `CAST(trunc(${a.sql}) AS BIGINT)` : `CAST(${a.sql} AS DOUBLE)`, type }
      }
      if (embedded) {
        const cast = name === 'toInt' ? 'INTEGER' : 'REAL'
        if (a.type === 'String' || a.type === 'JSON') {
          // text that is not a number is NULL (as ClickHouse's *OrNull), not 0
          return { ...a, sql: `(CASE WHEN trim(${a.sql}) GLOB '[0-9]*' OR trim(${a.sql}) GLOB '[-+][0-9]*' THEN CAST(${a.sql} AS ${cast}) END)`, type }
        }
        if (isTime(a)) return { ...a, sql: `CAST(${a.sql} / 1000 AS ${cast})`, type }
        return { ...a, sql: `CAST(${a.sql} AS ${cast})`, type }
      }
      const fn = name === 'toInt' ? 'toInt64' : 'toFloat64'
      if (a.type === 'String' || a.type === 'JSON') return { ...a, sql: `${fn}OrNull(${a.sql})`, type }
      if (isTime(a)) return { ...a, sql: `${fn}(toUInt32(${a.type === 'Date' ? compiler.dateToDateTime(a.sql) : a.sql}))`, type }
      return { ...a, sql: `${fn}(${a.sql})`, type }
    }
  }
  throw new QueryError(`Unknown function ${e.name}()`)
}

/**
 * A value as text, the same on every store (times as YYYY-MM-DD hh:mm:ss in UTC: ClickHouse prints a time in its
 * column's zone, UTC here; formatDateTime's %M is minutes on 18.16 and the month's name on current servers).
 */
function asText(compiler: Compiler, c: Compiled): string {
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

export { shift }
