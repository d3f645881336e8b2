// The functions a query may call (DESIGN.md "Query API", docs/query.md "Functions"), each written for every store so
// that it gives the same values everywhere. Anything not listed here is refused by name; the functions users are
// known to reach for and that are left out on purpose say why (REFUSED).
import type { Expr } from './ast'
import { fitsStatement } from './budget'
import { combine, parseTimeLiteral, shift, type Compiled, type Compiler, type ElementType, type ValueType } from './compile'
import { asciiCase, DAY_MS, isEmbedded, jsonExtractIntSql, numberSql, timeLiteral } from './dialect'
import { QueryError } from './errors'

type Want = 'any' | 'raw' | 'string' | 'number'
/** Compiles an argument; `acceptArray`: this function takes an array there (elsewhere one is refused). */
type Arg = (e: Expr, want: Want, acceptArray?: boolean) => Compiled
type Call = Extract<Expr, { k: 'call' }>

/**
 * Aggregates. Each one leaves NULL values out, so each takes the -If combinator the same way: fIf(x, …, cond) is
 * f over the values of the rows where cond holds (the others made NULL).
 */
const AGGREGATES = new Set([
  'count', 'uniq', 'uniqExact', 'sum', 'avg', 'min', 'max', 'any', 'argMin', 'argMax', 'groupArray', 'quantile',
  'quantileExact', 'median', 'quantiles', 'quantilesExact',
])
/** Aggregates written name(parameters)(arguments) */
const PARAMETRIC = new Set(['groupArray', 'quantile', 'quantileExact', 'quantiles', 'quantilesExact'])
const SCALARS = new Set([
  'toStartOfHour', 'toStartOfDay', 'toStartOfWeek', 'toStartOfMonth', 'toDate', 'toDateTime', 'now', 'today',
  'dateDiff', 'lower', 'upper', 'length', 'concat', 'substring', 'coalesce', 'ifNull', 'if', 'round', 'toString',
  'toInt', 'toFloat',
  'multiIf', 'floor', 'ceil', 'toStartOfMinute', 'toStartOfFiveMinutes', 'toStartOfTenMinutes', 'toStartOfFifteenMinutes',
  'toStartOfQuarter', 'toStartOfYear', 'toMonday', 'dateAdd', 'dateSub', 'addSeconds', 'addMinutes', 'addHours', 'addDays',
  'addWeeks', 'addMonths', 'addQuarters', 'addYears', 'subtractSeconds', 'subtractMinutes', 'subtractHours',
  'subtractDays', 'subtractWeeks', 'subtractMonths', 'subtractQuarters', 'subtractYears', 'JSONExtractString',
  'JSONExtractInt', 'JSONExtractFloat', 'JSONExtractBool', 'JSONExtractRaw', 'splitByChar', 'replaceAll', 'position',
  'extract', 'arrayJoin',
])
/** Other names ClickHouse gives the same functions. */
const ALIASES: Record<string, string> = {
  date_diff: 'dateDiff', date_add: 'dateAdd', date_sub: 'dateSub', replace: 'replaceAll', positionUTF8: 'position',
  ceiling: 'ceil', toStartOfFiveMinute: 'toStartOfFiveMinutes', medianExact: 'median',
}
const BY_LOWER = new Map<string, string>([
  ...[...AGGREGATES, ...SCALARS].map((n): [string, string] => [n.toLowerCase(), n]),
  ...Object.entries(ALIASES).map(([alias, name]): [string, string] => [alias.toLowerCase(), name]),
])

/** Functions users write that are left out on purpose, and why (docs/query.md lists them). */
const REFUSED = new Map<string, string>([
  ...['quantileTDigest', 'quantilesTDigest', 'quantileTiming', 'quantilesTiming', 'quantileDeterministic', 'quantileBFloat16', 'quantileDD', 'quantileGK', 'medianTDigest', 'medianTiming']
    .map((n): [string, string] => [n, 'it is approximate; quantile(p)(x) here is exact on every store (quantileExact)']),
  ...['quantileExactLow', 'quantileExactHigh', 'quantileExactInclusive', 'quantileExactExclusive', 'quantileExactWeighted', 'quantileInterpolatedWeighted', 'quantilesExactInclusive', 'quantilesExactExclusive']
    .map((n): [string, string] => [n, 'another definition of the quantile; quantile(p)(x) here is quantileExact']),
  ...['uniqCombined', 'uniqCombined64', 'uniqHLL12', 'uniqTheta', 'topK', 'topKWeighted']
    .map((n): [string, string] => [n, 'it is approximate; uniq() here counts exactly on every store']),
  ...['match', 'like', 'notLike', 'ilike', 'replaceRegexpAll', 'replaceRegexpOne', 'extractAll', 'extractGroups', 'extractAllGroups', 'multiMatchAny', 'multiSearchAny', 'countMatches', 'regexpExtract']
    .map((n): [string, string] => [n, 'of regular expressions only extract() is supported (LIKE and ILIKE for patterns)']),
  ...['has', 'hasAny', 'hasAll', 'indexOf', 'arrayElement', 'arrayMap', 'arrayFilter', 'arraySort', 'arrayDistinct', 'arrayConcat', 'arraySlice', 'arrayReduce', 'arrayStringConcat', 'range', 'array', 'emptyArrayString', 'groupUniqArray', 'groupArraySample', 'groupArraySorted', 'groupArrayInsertAt', 'groupArrayMovingSum', 'splitByString', 'splitByRegexp', 'tuple', 'tupleElement']
    .map((n): [string, string] => [n, 'of arrays only groupArray, quantiles, splitByChar, arrayJoin and length are supported']),
  ...['JSONExtract', 'JSONExtractUInt', 'JSONExtractKeys', 'JSONExtractKeysAndValues', 'JSONExtractArrayRaw', 'JSONHas', 'JSONLength', 'JSONType', 'JSONExtractKeysAndValuesRaw', 'visitParamExtractString', 'visitParamExtractRaw', 'visitParamExtractInt', 'visitParamExtractFloat', 'visitParamExtractBool', 'visitParamHas']
    .map((n): [string, string] => [n, 'properties are read by properties.x or JSONExtractString/Int/Float/Bool/Raw(properties, \'key\', …)']),
  ...['toStartOfInterval', 'toStartOfSecond', 'toTimeZone', 'formatDateTime', 'parseDateTimeBestEffort', 'toUnixTimestamp', 'toYear', 'toMonth', 'toDayOfMonth', 'toDayOfWeek', 'toHour', 'toMinute', 'toYYYYMM', 'toISOWeek', 'dateTrunc', 'date_trunc']
    .map((n): [string, string] => [n, 'not among the time functions supported (toStartOf…, dateDiff, dateAdd, add…/subtract…, toDate, toDateTime)']),
  ...['runningDifference', 'neighbor', 'windowFunnel', 'retention', 'sequenceMatch', 'sequenceCount']
    .map((n): [string, string] => [n, 'it depends on the order rows are read in, which differs between stores (funnels and retention are insights)']),
].map(([name, why]) => [name.toLowerCase(), why]))

/** Aggregate combinators ClickHouse has besides -If. */
const COMBINATORS = ['If', 'Array', 'State', 'Merge', 'MergeState', 'OrNull', 'OrDefault', 'ForEach', 'Distinct', 'Resample', 'SimpleState']

interface Resolved {
  /** the name as this catalogue spells it (sumIf for SUMIF) */
  name: string
  /** without the -If */
  base: string
  combinator: boolean
  aggregate: boolean
}

function resolve(name: string): Resolved | null {
  const lower = name.toLowerCase()
  const known = BY_LOWER.get(lower)
  if (known) return { name: known, base: known, combinator: false, aggregate: AGGREGATES.has(known) }
  if (lower.endsWith('if')) {
    const base = BY_LOWER.get(lower.slice(0, -2))
    if (base && AGGREGATES.has(base)) return { name: `${base}If`, base, combinator: true, aggregate: true }
  }
  return null
}

/** The refusal of a name not in the catalogue: why, when it is one left out on purpose. */
function refusal(name: string): QueryError {
  const lower = name.toLowerCase()
  const why = REFUSED.get(lower)
  if (why) return new QueryError(`Function ${name}() is not supported: ${why}`)
  for (const suffix of COMBINATORS) {
    const base = lower.slice(0, -suffix.length)
    if (lower.length > suffix.length && lower.endsWith(suffix.toLowerCase()) && resolve(base)?.aggregate) {
      return new QueryError(suffix === 'If'
        ? `Function ${name}(): -If is applied once (combine the conditions with AND)`
        : `Function ${name}(): the -${suffix} combinator is not supported (-If is)`)
    }
  }
  return new QueryError(`Unknown function ${name}()`)
}

/** The function's canonical name (names are matched without regard to case), or a refusal naming it. */
export function canonicalName(name: string): string {
  const known = resolve(name)
  if (!known) throw refusal(name)
  return known.name
}

export function isAggregate(name: string): boolean {
  return resolve(name)?.aggregate ?? false
}

function arity(name: string, args: Expr[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`
    throw new QueryError(`${name}() takes ${want} argument${min === 1 && max === 1 ? '' : 's'}, not ${args.length}`)
  }
}

const isTime = (c: Compiled) => c.type === 'DateTime' || c.type === 'Date'
const isNumber = (c: Compiled) => c.type === 'Int' || c.type === 'Float' || c.type === 'Bool'

/** A number written in the query (a sign allowed), or null. */
function literalNumber(e: Expr): number | null {
  if (e.k === 'number') return e.value
  if (e.k === 'unary' && e.op === '-' && e.arg.k === 'number') return -e.arg.value
  return null
}

/** A whole number written in the query within [min, max], or a refusal naming the function and what it is. */
function wholeLiteral(name: string, e: Expr | undefined, what: string, min: number, max: number): number {
  const n = e ? literalNumber(e) : null
  if (n === null || !Number.isInteger(n) || n < min || n > max) throw new QueryError(`${name}() takes ${what} as a whole number from ${min} to ${max}`)
  return n
}

/** A string written in the query, or a refusal naming the function and what it is. */
function stringLiteral(name: string, e: Expr | undefined, what: string): string {
  if (e?.k !== 'string') throw new QueryError(`${name}() takes ${what} as a string literal`)
  return e.value
}

export function compileCall(compiler: Compiler, e: Call, arg: Arg): Compiled {
  const resolved = resolve(e.name)
  if (!resolved) throw refusal(e.name)
  const name = resolved.name
  if (e.params && !PARAMETRIC.has(resolved.base)) throw new QueryError(`${name}() takes no parameters: ${name}(…)(…) is not allowed`)
  if (e.distinct && name !== 'count') throw new QueryError(`DISTINCT is only allowed in count(DISTINCT …), not in ${name}()`)
  if (e.star && name !== 'count') throw new QueryError(`${name}(*) is not allowed`)
  if (resolved.aggregate) return compileAggregate(compiler, resolved, e, arg)
  // the embedded stores (SQLite, DuckDB) share most of their SQL; `div` is their integer division
  const embedded = isEmbedded(compiler.dialect)
  const duck = compiler.dialect === 'duckdb'
  const div = duck ? '//' : '/'
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
    case 'now':
      arity(name, args, 0)
      return { sql: timeLiteral(compiler.dialect, compiler.now, 'DateTime'), type: 'DateTime', agg: false, loose: null, time: compiler.now }
    case 'today': {
      arity(name, args, 0)
      const ms = Math.floor(compiler.now / DAY_MS) * DAY_MS
      return { sql: timeLiteral(compiler.dialect, ms, 'Date'), type: 'Date', agg: false, loose: null, time: ms }
    }
    case 'toStartOfMinute':
    case 'toStartOfFiveMinutes':
    case 'toStartOfTenMinutes':
    case 'toStartOfFifteenMinutes':
    case 'toStartOfHour':
    case 'toStartOfDay': {
      arity(name, args, 1)
      const a = timeArg(args[0])
      const minutes = { toStartOfMinute: 1, toStartOfFiveMinutes: 5, toStartOfTenMinutes: 10, toStartOfFifteenMinutes: 15, toStartOfHour: 60, toStartOfDay: 1440 }[name]
      const unit = minutes * 60_000
      const folded = fold(a, (ms) => Math.floor(ms / unit) * unit, 'DateTime')
      if (folded) return folded
      if (embedded) return { ...a, sql: `((${a.sql} ${div} ${unit}) * ${unit})`, type: 'DateTime' }
      const base = a.type === 'Date' ? compiler.dateToDateTime(a.sql) : a.sql
      // 18.16 has no toStartOfTenMinutes (and spells five toStartOfFiveMinute): minutes counted within the hour
      if (minutes > 1 && minutes < 60) return { ...a, sql: `addMinutes(toStartOfHour(${base}), intDiv(toMinute(${base}), ${minutes}) * ${minutes})`, type: 'DateTime' }
      return { ...a, sql: `${name}(${base})`, type: 'DateTime' }
    }
    case 'toMonday': {
      arity(name, args, 1)
      const a = timeArg(args[0])
      // 1970-01-01 was a Thursday: a day number's Monday is 3 days before it, less whole weeks
      const folded = fold(a, (ms) => { const d = Math.floor(ms / DAY_MS); return (d - (((d + 3) % 7) + 7) % 7) * DAY_MS }, 'Date')
      if (folded) return folded
      if (embedded) return { ...a, sql: `(((${a.sql} ${div} ${DAY_MS}) - (((${a.sql} ${div} ${DAY_MS}) + 3) % 7)) * ${DAY_MS})`, type: 'Date' }
      return { ...a, sql: `toMonday(${a.sql})`, type: 'Date' }
    }
    case 'toStartOfQuarter':
    case 'toStartOfYear': {
      arity(name, args, 1)
      const a = timeArg(args[0])
      const quarter = name === 'toStartOfQuarter'
      const folded = fold(a, (ms) => { const d = new Date(ms); return Date.UTC(d.getUTCFullYear(), quarter ? d.getUTCMonth() - (d.getUTCMonth() % 3) : 0, 1) }, 'Date')
      if (folded) return folded
      if (duck) return { ...a, sql: `epoch_ms(date_trunc('${quarter ? 'quarter' : 'year'}', epoch_ms(${a.sql})))`, type: 'Date' }
      if (embedded) {
        const seconds = `${a.sql} / 1000, 'unixepoch'`
        const start = quarter ? `'start of month', '-' || ((CAST(strftime('%m', ${seconds}) AS INTEGER) - 1) % 3) || ' months'` : "'start of year'"
        return { ...a, sql: `(CAST(strftime('%s', ${seconds}, ${start}) AS INTEGER) * 1000)`, type: 'Date' }
      }
      return { ...a, sql: `${name}(${a.sql})`, type: 'Date' }
    }
    case 'dateAdd':
    case 'dateSub': {
      // dateAdd(unit, n, time), the unit a string or a bare word (dateAdd(day, 1, t))
      arity(name, args, 3)
      const unitExpr = args[0]
      const unit = unitExpr.k === 'string' ? unitExpr.value : unitExpr.k === 'name' && unitExpr.parts.length === 1 ? unitExpr.parts[0] : null
      if (unit === null) throw new QueryError(`${name}() takes the unit first: 'second', 'minute', 'hour', 'day', 'week', 'month', 'quarter' or 'year'`)
      const count = wholeLiteral(name, args[1], 'its count (the second argument)', -1_000_000, 1_000_000)
      return shiftBy(compiler, name, timeArg(args[2]), unit, name === 'dateSub' ? -count : count)
    }
    case 'addSeconds': case 'addMinutes': case 'addHours': case 'addDays': case 'addWeeks': case 'addMonths': case 'addQuarters': case 'addYears':
    case 'subtractSeconds': case 'subtractMinutes': case 'subtractHours': case 'subtractDays': case 'subtractWeeks': case 'subtractMonths': case 'subtractQuarters': case 'subtractYears': {
      arity(name, args, 2)
      const subtract = name.startsWith('subtract')
      const unit = name.slice(subtract ? 8 : 3, -1)
      const count = wholeLiteral(name, args[1], 'its count', -1_000_000, 1_000_000)
      return shiftBy(compiler, name, timeArg(args[0]), unit, subtract ? -count : count)
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
      const a = arg(args[0], 'string', true)
      if (a.array) {
        const count = compiler.dialect === 'sqlite' ? `json_array_length(${a.sql})` : duck ? `len(${a.sql})` : `length(${a.sql})`
        return { ...combine([a], count, 'Int') }
      }
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
    case 'multiIf': {
      // multiIf(cond1, then1, cond2, then2, …, otherwise)
      if (args.length < 3 || args.length % 2 === 0) throw new QueryError(`multiIf() takes pairs of a condition and a value, then the value otherwise (an odd number of arguments, at least 3), not ${args.length}`)
      const parts = args.map((x, i) => (i % 2 === 0 && i < args.length - 1 ? condition(name, arg(x, 'any')) : arg(x, 'string')))
      const values = parts.filter((_, i) => i % 2 === 1 || i === args.length - 1)
      const type = commonType(name, values)
      fitsStatement(parts.map((p) => p.sql))
      if (!embedded) return combine(parts, `multiIf(${parts.map((p) => p.sql).join(', ')})`, type)
      let sql = 'CASE'
      for (let i = 0; i + 1 < parts.length; i += 2) sql += ` WHEN ${parts[i].sql} THEN ${parts[i + 1].sql}`
      return combine(parts, `(${sql} ELSE ${parts[parts.length - 1].sql} END)`, type)
    }
    case 'if': {
      arity(name, args, 3)
      const parts = [arg(args[0], 'any'), arg(args[1], 'string'), arg(args[2], 'string')]
      const type = parts[1].type !== 'Null' ? parts[1].type : parts[2].type
      const [c, a, b] = parts.map((p) => p.sql)
      return combine(parts, embedded ? `(CASE WHEN ${c} THEN ${a} ELSE ${b} END)` : `if(${c}, ${a}, ${b})`, type)
    }
    case 'round':
    case 'floor':
    case 'ceil': {
      arity(name, args, 1, 2)
      const a = arg(args[0], 'number')
      if (!isNumber(a) && a.type !== 'Null') throw new QueryError(`${name}() takes a number, not a ${a.type}`)
      const places = args[1] ? wholeLiteral(name, args[1], 'its decimals', -15, 15) : 0
      return roundTo(compiler, name, a, places)
    }
    case 'JSONExtractString':
    case 'JSONExtractRaw':
    case 'JSONExtractFloat':
    case 'JSONExtractInt':
    case 'JSONExtractBool': {
      // JSONExtract…(properties, 'key', …): properties.key… read as each says, with ClickHouse's answer when the
      // value is absent or of another kind ('' or 0) rather than NULL
      if (args.length < 2) throw new QueryError(`${name}() takes the properties column and at least one key: ${name}(properties, 'key', …)`)
      const source = args[0]
      if (source.k !== 'property' || source.path.length > 0) throw new QueryError(`${name}() reads the properties column: ${name}(properties, 'key', …)`)
      const path = args.slice(1).map((k) => {
        if (k.k === 'number') throw new QueryError(`${name}() takes keys as strings: array positions are not supported`)
        return stringLiteral(name, k, 'each key')
      })
      if (path.length > 16) throw new QueryError(`${name}() takes at most 16 keys`)
      const property = (want: Want) => arg({ ...source, path }, want)
      const orElse = (want: Want, otherwise: string, type: ValueType) => {
        const value = property(want)
        return combine([value], `coalesce(${value.sql}, ${otherwise})`, type)
      }
      if (name === 'JSONExtractString') return orElse('string', "''", 'String')
      if (name === 'JSONExtractRaw') return orElse('raw', "''", 'String')
      if (name === 'JSONExtractFloat') return orElse('number', '0', 'Float')
      if (name === 'JSONExtractBool') {
        const raw = property('raw')
        const is = duck ? `CAST(coalesce(${raw.sql} = 'true', false) AS INTEGER)` : `coalesce(${raw.sql} = 'true', 0)`
        return combine([raw], is, 'Int')
      }
      // the properties column itself (a path of no keys reads it whole)
      const column = arg({ ...source, path: [] }, 'string')
      return combine([column], jsonExtractIntSql(compiler.dialect, compiler.params, column.sql, path), 'Int')
    }
    case 'splitByChar': {
      arity(name, args, 2)
      const separator = stringLiteral(name, args[0], 'its separator (first)')
      // one ASCII punctuation or space: ClickHouse takes one byte, and SQLite's array is the text's JSON with the
      // separator replaced, which must not be a character JSON escapes or writes in an escape
      if (!/^[ -/:-@[\]^_`{-~]$/.test(separator) || separator === '\\' || separator === '"') {
        throw new QueryError('splitByChar() takes one ASCII punctuation character or a space as its separator (not \\ or ")')
      }
      const a = arg(args[1], 'string')
      const text = jsonPlain(compiler, asText(compiler, a))
      const sep = compiler.params.string(separator)
      // NULL is split into no pieces on every store (ClickHouse has no NULL array)
      let sql: string
      if (compiler.dialect === 'sqlite') sql = `(CASE WHEN ${text} IS NULL THEN '[]' ELSE '[' || replace(json_quote(${text}), ${sep}, '","') || ']' END)`
      else if (duck) sql = `(CASE WHEN ${text} IS NULL THEN CAST([] AS VARCHAR[]) ELSE string_split(${text}, ${sep}) END)`
      else sql = `if(isNull(${text}), emptyArrayString(), splitByChar(${sep}, ifNull(${text}, '')))`
      return { ...combine([a], sql, 'JSON'), array: 'String' }
    }
    case 'replaceAll': {
      arity(name, args, 3)
      const a = arg(args[0], 'string')
      // ClickHouse 18.16 takes only constants for what is replaced and by what
      const from = stringLiteral(name, args[1], 'what it replaces (second)')
      const to = stringLiteral(name, args[2], 'its replacement (third)')
      if (from === '') throw new QueryError('replaceAll() needs a non-empty string to replace')
      const fn = embedded ? 'replace' : 'replaceAll'
      return combine([a], `${fn}(${asText(compiler, a)}, ${compiler.params.string(from)}, ${compiler.params.string(to)})`, 'String')
    }
    case 'position': {
      // in characters, from 1; 0 when absent (ClickHouse's positionUTF8; its position counts bytes)
      arity(name, args, 2)
      const [h, n] = [arg(args[0], 'string'), arg(args[1], 'string')]
      const [hs, ns] = [asText(compiler, h), asText(compiler, n)]
      return combine([h, n], embedded ? `instr(${hs}, ${ns})` : `positionUTF8(${hs}, ${ns})`, 'Int')
    }
    case 'extract': {
      arity(name, args, 2)
      const pattern = stringLiteral(name, args[1], 'its regular expression (second)')
      const groups = checkRegex(pattern)
      if (compiler.dialect === 'sqlite') {
        throw new QueryError('extract() is not available on the embedded SQLite store: SQLite has no regular expressions (the DuckDB store and ClickHouse have them)')
      }
      const a = arg(args[0], 'string')
      const text = asText(compiler, a)
      const p = compiler.params.string(pattern)
      // the first group's match when the expression has groups, else the whole match; '' when none (ClickHouse's
      // rule); `.` matches a line break on both, as in ClickHouse
      if (duck) return combine([a], `regexp_extract(${text}, ${p}, ${groups > 0 ? 1 : 0}, 's')`, 'String')
      return combine([a], `extract(${text}, ${p})`, 'String')
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

/** A condition (of -If, multiIf): a boolean, or a number taken as true when not 0, as ClickHouse does. */
function condition(name: string, c: Compiled): Compiled {
  if (c.type === 'Bool' || c.type === 'Null') return c
  if (c.type === 'Int' || c.type === 'Float') return { ...c, sql: `(${c.sql} != 0)`, type: 'Bool' }
  throw new QueryError(`${name}() takes a condition there, not a ${c.type === 'JSON' ? 'property' : c.type}`)
}

/** The type of values that stand for one another (branches of multiIf): numbers with numbers, else one type. */
function commonType(name: string, values: Compiled[]): ValueType {
  const typed = values.filter((v) => v.type !== 'Null')
  if (typed.length === 0) return 'Null'
  if (typed.every(isNumber)) return typed.some((v) => v.type === 'Float') ? 'Float' : typed.some((v) => v.type === 'Int') ? 'Int' : 'Bool'
  const type = typed[0].type === 'JSON' ? 'String' : typed[0].type
  for (const v of typed) {
    const t = v.type === 'JSON' ? 'String' : v.type
    // ClickHouse refuses values with no common type; SQLite would answer them: refused here on every store
    if (t !== type) throw new QueryError(`${name}() gives values of different types (${type} and ${t}): convert one (toString, toInt, toFloat)`)
  }
  return typed[0].type
}

/** time + count units (dateAdd, addDays, …), through the compiler's own time arithmetic. */
function shiftBy(compiler: Compiler, name: string, time: Compiled, unit: string, count: number): Compiled {
  const u = unit.toUpperCase().replace(/S$/, '')
  const units: Record<string, [string, number]> = {
    SECOND: ['SECOND', 1], MINUTE: ['MINUTE', 1], HOUR: ['HOUR', 1], DAY: ['DAY', 1], WEEK: ['WEEK', 1],
    MONTH: ['MONTH', 1], QUARTER: ['MONTH', 3], YEAR: ['MONTH', 12],
  }
  const known = units[u]
  if (!known) throw new QueryError(`${name}() does not know the unit '${unit}' (second, minute, hour, day, week, month, quarter, year)`)
  // an hour added to a date is a time (ClickHouse's addHours of a Date is a DateTime)
  const base = time.type === 'Date' && ['SECOND', 'MINUTE', 'HOUR'].includes(u) ? { ...time, sql: compiler.dateToDateTime(time.sql), type: 'DateTime' as ValueType } : time
  return compiler.shiftTime(base, count * known[1], known[0])
}

/**
 * round/floor/ceil to `places` decimals (negative: tens, hundreds…), one definition on every store: the number times
 * 10^places (divided by 10^-places), made whole, and back. round halves to even, as a current ClickHouse's does for
 * floats (18.16, SQLite and DuckDB round halves away from zero: each is written out here); a whole number rounded
 * to tens or more halves away from zero, as ClickHouse's does.
 */
function roundTo(compiler: Compiler, name: string, a: Compiled, places: number): Compiled {
  const embedded = isEmbedded(compiler.dialect)
  const duck = compiler.dialect === 'duckdb'
  if (a.type !== 'Float' && a.type !== 'Null') {
    const int = a.type === 'Bool' ? (duck ? `CAST(${a.sql} AS BIGINT)` : a.sql) : a.sql
    if (places >= 0) return { ...a, sql: int, type: 'Int' }
    const k = 10 ** -places
    if (name === 'round') {
      if (!embedded) return { ...a, sql: `round(${int}, ${places})`, type: 'Int' }
      const div = duck ? '//' : '/'
      return { ...a, sql: `(CASE WHEN ${int} >= 0 THEN ((${int} + ${k / 2}) ${div} ${k}) * ${k} ELSE - (((- ${int} + ${k / 2}) ${div} ${k}) * ${k}) END)`, type: 'Int' }
    }
  }
  // a double on every store (DuckDB reads 2.5 as a DECIMAL)
  const x = duck ? `CAST(${a.sql} AS DOUBLE)` : embedded ? `CAST(${a.sql} AS REAL)` : `toFloat64(${a.sql})`
  const k = numberSql(10 ** Math.abs(places))
  const scaled = places === 0 ? x : places > 0 ? `(${x} * ${k})` : `(${x} / ${k})`
  let whole: string
  if (name === 'floor' || name === 'ceil') whole = `${name}(${scaled})`
  else {
    // to the nearest whole number, a half to the even one: r - floor(r) is exact for every double
    const f = `floor(${scaled})`
    whole = `(CASE WHEN ${scaled} - ${f} > 0.5 OR (${scaled} - ${f} = 0.5 AND ${f} - 2 * floor(${f} / 2) = 1) THEN ${f} + 1 ELSE ${f} END)`
  }
  const back = places === 0 ? whole : places > 0 ? `(${whole} / ${k})` : `(${whole} * ${k})`
  return { ...a, sql: back, type: 'Float' }
}

/**
 * A regular expression for extract(), checked before it reaches a store: both stores that run it use RE2 (linear in
 * the text, no backtracking), and what RE2 has no meaning for is refused here by name (back-references,
 * look-around, possessive or atomic groups); counted repetitions are at most 1000 (RE2's own bound) and the pattern
 * 1000 characters. Answers how many capturing groups it has.
 */
export function checkRegex(pattern: string): number {
  const refuse = (why: string): never => {
    throw new QueryError(`extract(): the regular expression ${why}`)
  }
  if (pattern.length > 1000) refuse('is longer than 1000 characters')
  let groups = 0
  let inClass = false
  /** groups open: RE2 refuses an expression whose parentheses do not pair, as the stores would (their words) */
  let open = 0
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\') {
      const next = pattern[i + 1]
      if (next === undefined) refuse('ends with a lone \\')
      if (!inClass && /[1-9]/.test(next)) refuse(`refers back to a group (\\${next}): RE2 has no back-references`)
      if (next === 'Q') {
        // \Q…\E: literal text
        const end = pattern.indexOf('\\E', i + 2)
        i = end === -1 ? pattern.length : end + 1
        continue
      }
      i++
      continue
    }
    if (inClass) {
      if (c === '[' && pattern[i + 1] === ':') {
        const end = pattern.indexOf(':]', i + 2)
        if (end !== -1) i = end + 1
      } else if (c === ']') inClass = false
      continue
    }
    if (c === '[') {
      inClass = true
      // a ] right after [ or [^ is a character of the class
      if (pattern[i + 1] === '^') i++
      if (pattern[i + 1] === ']') i++
      continue
    }
    if (c === ')') {
      if (--open < 0) refuse('closes a group it did not open')
      continue
    }
    if (c === '(') {
      open++
      if (pattern[i + 1] !== '?') {
        groups++
        continue
      }
      const rest = pattern.slice(i + 2, i + 4)
      if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!') refuse('looks around ((?=, (?!, (?<=, (?<!): RE2 does not')
      if (rest.startsWith('>')) refuse('holds an atomic group (?>: RE2 has none')
      if (rest === 'P=' || rest === 'P>' || rest.startsWith('R') || /^[0-9+-]/.test(rest)) refuse('refers back to a group: RE2 has no back-references or recursion')
      // (?P<name>…) and (?<name>…) capture; (?:…) and flags (?i) do not
      if (rest === 'P<' || (rest.startsWith('<') && rest !== '<=' && rest !== '<!')) groups++
      continue
    }
    if ((c === '*' || c === '+' || c === '?' || c === '}') && pattern[i + 1] === '+') refuse('has a possessive quantifier (…+): RE2 has none')
    if (c === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i))
      if (m && (Number(m[1]) > 1000 || (m[2] && Number(m[2]) > 1000))) refuse('repeats something more than 1000 times')
    }
  }
  if (inClass) refuse('leaves a [ unclosed')
  if (open > 0) refuse('leaves a ( unclosed')
  return groups
}

/** Aggregates, with -If (the condition last): the values of the other rows are made NULL, which each leaves out. */
function compileAggregate(compiler: Compiler, r: Resolved, e: Call, arg: Arg): Compiled {
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
  throw refusal(e.name)
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

/**
 * Text as SQLite's JSON functions take it: a property read as text may be SQLite's JSON of it (`->`), which they
 * would take as JSON (a number, an object) rather than as a string; a concatenation is plain text.
 */
function jsonPlain(compiler: Compiler, sql: string): string {
  return compiler.dialect === 'sqlite' ? `(${sql} || '')` : sql
}

/** A 64-bit integer as 20 characters that sort as it does: a sign character ('0' below zero, '1' from it) and 19 digits. */
function sortableInteger(sql: string): string {
  return `(CASE WHEN ${sql} < 0 THEN '0' || printf('%019d', ${sql} + 9223372036854775807 + 1) ELSE '1' || printf('%019d', ${sql}) END)`
}

function integerFromSortable(sql: string): string {
  return `(CASE WHEN substr(${sql}, 1, 1) = '1' THEN CAST(substr(${sql}, 2) AS INTEGER) ELSE CAST(substr(${sql}, 2) AS INTEGER) - 9223372036854775807 - 1 END)`
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
