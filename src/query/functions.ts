// The functions a query may call (DESIGN.md "Query API", docs/query.md "Functions"), each written for every store so
// that it gives the same values everywhere. Anything not listed here is refused by name; the functions users are
// known to reach for and that are left out on purpose say why (REFUSED).
import type { Expr } from './ast'
import { fitsStatement } from './budget'
import { combine, parseTimeLiteral, shift, type Compiled, type Compiler, type ValueType } from './compile'
import { asciiCase, DAY_MS, isEmbedded, jsonExtractIntSql, numberSql, timeLiteral } from './dialect'
import { QueryError } from './errors'
import { compileAggregate } from './aggregates'
import { arity, asText, condition, isNumber, isTime, jsonPlain, stringLiteral, wholeLiteral, type Arg, type Call, type Resolved, type Want } from './function-args'
import { checkRegex } from './regex-check'
import { SURVEY_FUNCTIONS, surveyCall } from './survey-functions'

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
  'extract', 'match', 'arrayJoin', ...SURVEY_FUNCTIONS,
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
  ...['like', 'notLike', 'ilike', 'replaceRegexpAll', 'replaceRegexpOne', 'extractAll', 'extractGroups', 'extractAllGroups', 'multiMatchAny', 'multiSearchAny', 'countMatches', 'regexpExtract']
    .map((n): [string, string] => [n, 'of regular expressions only extract() and match() are supported (LIKE and ILIKE for patterns)']),
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

export function compileCall(compiler: Compiler, e: Call, arg: Arg): Compiled {
  const resolved = resolve(e.name)
  if (!resolved) throw refusal(e.name)
  const name = resolved.name
  if (e.params && !PARAMETRIC.has(resolved.base)) throw new QueryError(`${name}() takes no parameters: ${name}(…)(…) is not allowed`)
  if (e.distinct && name !== 'count') throw new QueryError(`DISTINCT is only allowed in count(DISTINCT …), not in ${name}()`)
  if (e.star && name !== 'count') throw new QueryError(`${name}(*) is not allowed`)
  if (resolved.aggregate) {
    const aggregate = compileAggregate(compiler, resolved, e, arg)
    if (aggregate) return aggregate
    throw refusal(e.name)
  }
  // PostHog's survey helpers: the expression each stands for, compiled as any other
  const survey = surveyCall(name, e)
  if (survey) return arg(survey, 'any')
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
    case 'match': {
      // whether the text holds a match anywhere (RE2 on both stores; `.` matches a line break, as ClickHouse's)
      arity(name, args, 2)
      const pattern = stringLiteral(name, args[1], 'its regular expression (second)')
      checkRegex(pattern, 'match')
      if (compiler.dialect === 'sqlite') {
        throw new QueryError('match() is not available on the embedded SQLite store: SQLite has no regular expressions (the embedded DuckDB store, EMBEDDED_EVENT_STORE=duckdb, and ClickHouse have them)')
      }
      const a = arg(args[0], 'string')
      if (duck) return combine([a], `regexp_matches(${asText(compiler, a)}, ${compiler.params.string(pattern)}, 's')`, 'Bool')
      // in a group: ClickHouse 18.16 looks for the pattern's outermost literal text case-sensitively before RE2
      // runs, whatever (?i) says (match('SHOP', '(?i)shop') was 0); it does not look inside groups
      return combine([a], `match(${asText(compiler, a)}, ${compiler.params.string(`(?:${pattern})`)})`, 'Bool')
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

export { shift }
