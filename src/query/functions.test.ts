// The functions of docs/query.md "Functions" as each store's SQL: every one compiles on every dialect, each is
// written the way that gives every store the same answer (the answers themselves: test/integration/query-functions.*),
// and what is refused is refused by name before any store is asked.
import { describe, expect, test } from 'bun:test'
import { compileQuery, type CompiledQuery } from './compile'
import type { DialectName } from './dialect'
import { QueryError, QueryLimitError } from './errors'
import { canonicalName, isAggregate } from './functions'
import { checkRegex } from './regex-check'
import { parseQuery } from './parser'

const DIALECTS: DialectName[] = ['sqlite', 'duckdb', 'clickhouse-legacy', 'clickhouse-modern']
const compile = (text: string, dialect: DialectName): CompiledQuery =>
  compileQuery(parseQuery(text), { dialect, teamId: 42, database: 'db', now: Date.UTC(2024, 0, 10, 12, 30) })
const refusal = (text: string, dialect: DialectName = 'duckdb'): string => {
  try {
    compile(text, dialect)
  } catch (error) {
    expect(error).toBeInstanceOf(QueryError)
    return (error as Error).message
  }
  throw new Error(`not refused on ${dialect}: ${text}`)
}

describe('every function compiles on every store, with its type', () => {
  const cases: [string, string][] = [
    ["countIf(event = 'a')", 'Int'],
    ["countIf(properties.n, properties.n > 1)", 'Int'],
    ["sumIf(properties.n, event = 'a')", 'Float'],
    ["avgIf(properties.n, event = 'a')", 'Float'],
    ["uniqIf(distinct_id, event = 'a')", 'Int'],
    ["minIf(timestamp, event = 'a')", 'DateTime'],
    ["maxIf(properties.n, 1)", 'Float'],
    ['uniq(distinct_id)', 'Int'],
    ['uniqExact(distinct_id)', 'Int'],
    ['argMax(event, timestamp)', 'String'],
    ['argMin(timestamp, properties.n)', 'DateTime'],
    ["argMaxIf(properties.$current_url, timestamp, event = '$pageview')", 'String'],
    ['groupArray(event)', 'JSON'],
    ['groupArray(5)(properties.n)', 'JSON'],
    ['quantile(0.9)(properties.n)', 'Float'],
    ["quantile(0.5)(dateDiff('second', timestamp, now()))", 'Int'],
    ['quantiles(0.5, 0.9, 0.99)(properties.n)', 'JSON'],
    ['median(properties.n)', 'Float'],
    ["quantileIf(0.5)(properties.n, event = 'a')", 'Float'],
    ['toStartOfMinute(timestamp)', 'DateTime'],
    ['toStartOfFiveMinutes(timestamp)', 'DateTime'],
    ['toStartOfFiveMinute(timestamp)', 'DateTime'],
    ['toStartOfTenMinutes(timestamp)', 'DateTime'],
    ['toStartOfFifteenMinutes(timestamp)', 'DateTime'],
    ['toStartOfQuarter(timestamp)', 'Date'],
    ['toStartOfYear(timestamp)', 'Date'],
    ['toMonday(timestamp)', 'Date'],
    ["dateAdd('day', 1, timestamp)", 'DateTime'],
    ['dateAdd(week, -2, toDate(timestamp))', 'Date'],
    ["dateAdd('hour', 3, toDate(timestamp))", 'DateTime'],
    ["dateSub('year', 1, timestamp)", 'DateTime'],
    ["date_add('quarter', 1, timestamp)", 'DateTime'],
    ['addDays(timestamp, 7)', 'DateTime'],
    ['subtractMonths(timestamp, 1)', 'DateTime'],
    ["dateDiff('day', timestamp, now())", 'Int'],
    ["multiIf(event = 'a', 'x', event = 'b', 'y', 'z')", 'String'],
    ["multiIf(event = 'a', 1, 2.5)", 'Float'],
    ["coalesce(properties.a, properties.b, 'none')", 'String'],
    ["ifNull(properties.a, 'none')", 'String'],
    ["JSONExtractString(properties, 'a', 'b')", 'String'],
    ["JSONExtractInt(properties, 'n')", 'Int'],
    ["JSONExtractFloat(properties, 'n')", 'Float'],
    ["JSONExtractBool(properties, 'flag')", 'Int'],
    ["JSONExtractRaw(properties, 'obj')", 'String'],
    ["splitByChar(',', properties.tags)", 'JSON'],
    ["length(splitByChar(',', properties.tags))", 'Int'],
    ["replaceAll(event, '$', '')", 'String'],
    ["replace(event, 'a', 'b')", 'String'],
    ['lower(event)', 'String'],
    ["position(event, 'view')", 'Int'],
    ["positionUTF8(event, 'view')", 'Int'],
    ['round(properties.n, 2)', 'Float'],
    ['round(25, -1)', 'Int'],
    ['floor(properties.n)', 'Float'],
    ['ceil(properties.n, 1)', 'Float'],
    ['ceiling(properties.n)', 'Float'],
  ]
  for (const [expr, type] of cases) {
    test(expr, () => {
      for (const dialect of DIALECTS) {
        const c = compile(`SELECT ${expr} FROM events`, dialect)
        expect(c.sql).toStartWith('SELECT ')
        expect(c.types).toEqual([type as never])
      }
    })
  }
  test("extract (RE2) on DuckDB and ClickHouse; SQLite has no regular expressions: refused, saying so", () => {
    for (const dialect of ['duckdb', 'clickhouse-legacy', 'clickhouse-modern'] as const) expect(compile("SELECT extract(event, 'a(b)') FROM events", dialect).types).toEqual(['String'])
    expect(refusal("SELECT extract(event, 'a(b)') FROM events", 'sqlite')).toMatch(/extract\(\) is not available on the embedded SQLite store: SQLite has no regular expressions/)
  })
  test('match (RE2) on DuckDB and ClickHouse, a boolean; refused on SQLite naming the stores that have it; its pattern checked', () => {
    for (const dialect of ['duckdb', 'clickhouse-legacy', 'clickhouse-modern'] as const) expect(compile("SELECT match(event, '^a.c$') FROM events", dialect).types).toEqual(['Bool'])
    expect(compile("SELECT count() FROM events WHERE match(properties.$current_url, 'x$')", 'duckdb').sql).toContain(", 's')")
    expect(refusal("SELECT match(event, 'a') FROM events", 'sqlite')).toMatch(/match\(\) is not available on the embedded SQLite store.*EMBEDDED_EVENT_STORE=duckdb/)
    expect(refusal("SELECT match(event, '(?=a)') FROM events", 'duckdb')).toMatch(/match\(\): the regular expression looks around/)
    expect(refusal('SELECT match(event, event) FROM events', 'duckdb')).toMatch(/string literal/)
  })
})

describe('each store written for the same answer', () => {
  test('-If: the other rows’ values made NULL, which every aggregate leaves out', () => {
    expect(compile("SELECT countIf(event = 'a') FROM events", 'clickhouse-legacy').sql).toContain("count(if((event = 'a'), 1, NULL))")
    expect(compile("SELECT countIf(event = 'a') FROM events", 'sqlite').sql).toContain('count((CASE WHEN (_e0.event = ?1) THEN 1 END))')
    expect(compile("SELECT uniqIf(distinct_id, event = 'a') FROM events", 'clickhouse-modern').sql).toContain('ifNull(uniqExact(if((event = {p0:String}), distinct_id, NULL)), 0)')
    // a number as a condition is true when not 0, on every store
    expect(compile('SELECT sumIf(properties.n, 1) FROM events', 'duckdb').sql).toContain('CASE WHEN (1 != 0) THEN')
  })

  test('quantile is exact everywhere: quantileExact on ClickHouse, the level a double on DuckDB, one sort on SQLite', () => {
    for (const dialect of ['clickhouse-legacy', 'clickhouse-modern'] as const) {
      const { sql } = compile('SELECT quantile(0.9)(properties.n), quantiles(0.5, 1)(properties.n) FROM events', dialect)
      expect(sql).toContain('quantileExact(0.9)(')
      expect(sql).toContain('quantilesExact(0.5, 1.0)(')
      expect(sql).not.toMatch(/quantiles?\(0/)
    }
    expect(compile('SELECT quantile(0.9)(properties.n) FROM events', 'duckdb').sql).toContain('CAST(0.9 AS DOUBLE) * count(')
    const sqlite = compile('SELECT quantiles(0.1, 0.5, 0.9)(properties.n) FROM events', 'sqlite').sql
    expect(sqlite.match(/json_group_array\(/g)?.length).toBe(1)
  })

  test('argMin/argMax: the least or greatest pair (v, a); SQLite sorts no rows when v is whole and a text or whole', () => {
    expect(compile('SELECT argMax(event, timestamp) FROM events', 'clickhouse-legacy').sql).toContain('tupleElement(maxIf(tuple(timestamp, event)')
    expect(compile('SELECT argMin(event, timestamp) FROM events', 'duckdb').sql).toContain('struct_extract(min(struct_pack(v := _e0.timestamp, a := _e0.event))')
    const fast = compile('SELECT argMax(properties.$current_url, timestamp) FROM events', 'sqlite').sql
    expect(fast).toContain("printf('%019d'")
    expect(fast).not.toContain('ORDER BY')
    expect(compile('SELECT argMax(event, properties.price) FROM events', 'sqlite').sql).toContain('ORDER BY')
  })

  test('arrayJoin: one array per SELECT; ClickHouse in place, SQLite joined beside, DuckDB in a projection (not a lateral join)', () => {
    const q = "SELECT arrayJoin(splitByChar(',', properties.tags)) AS tag, count() FROM events GROUP BY tag"
    const ch = compile(q, 'clickhouse-modern').sql
    const unrolled = ch.match(/arrayJoin\(.*?\) AS _q0_0/)![0].slice(0, -' AS _q0_0'.length)
    expect(ch).toContain(`GROUP BY ${unrolled}`)
    expect(compile(q, 'sqlite').sql).toContain(', json_each((CASE WHEN')
    const duck = compile(q, 'duckdb').sql
    expect(duck).toContain('FROM (SELECT _e0.*, unnest((CASE WHEN')
    expect(duck).toContain('GROUP BY _e0._j0')
    // the tenant inside (nothing of another project unrolled) and outside
    expect(duck.match(/_e0\.team_id = 42/g)?.length).toBe(2)
    // person_id beside it: the mapping joined to the unrolled rows; an array made of person_id: joined inside too
    const person = compile("SELECT arrayJoin(splitByChar(',', properties.tags)) AS t, person_id FROM events", 'duckdb').sql
    expect(person.match(/LEFT JOIN person_distinct_id/g)?.length).toBe(1)
    expect(person).toMatch(/\) AS _e0 LEFT JOIN person_distinct_id/)
    const made = compile("SELECT arrayJoin(splitByChar('-', coalesce(person_id, 'x'))) AS t, person_id FROM events", 'duckdb').sql
    expect(made.match(/LEFT JOIN person_distinct_id/g)?.length).toBe(2)
    const sub = compile("SELECT arrayJoin(ids) AS id FROM (SELECT groupArray(event) AS ids FROM events)", 'duckdb').sql
    expect(sub).toContain('FROM (SELECT _t0.*, unnest(_t0._q1_0) AS _j0 FROM (SELECT')
  })

  test('arrays: JSON text in the answer, the store’s own array in a subquery', () => {
    expect(compile('SELECT groupArray(event) FROM events', 'duckdb').sql).toStartWith('SELECT CAST(to_json(')
    expect(compile('SELECT groupArray(event) FROM events', 'clickhouse-legacy').sql).toStartWith("SELECT concat('[', arrayStringConcat(arrayMap(_x -> concat('\"', replaceAll(")
    const sub = compile('SELECT e FROM (SELECT groupArray(event) AS e FROM events)', 'clickhouse-modern')
    expect(sub.sql.match(/arrayStringConcat/g)?.length).toBe(1)
    expect(sub.sql).toContain('arraySlice(arraySort(groupArray(event)), 1, 10000) AS _q1_0')
    expect(sub.types).toEqual(['JSON'])
  })

  test('round halves to even and is written out where the store’s own does not (SQLite, DuckDB, 18.16)', () => {
    for (const dialect of DIALECTS) {
      const { sql } = compile('SELECT round(properties.n, 2) FROM events', dialect)
      expect(sql).not.toMatch(/\bround\(/)
      expect(sql).toContain('= 0.5 AND floor(')
    }
    // whole numbers to tens: halves away from zero (ClickHouse's own on both versions)
    expect(compile('SELECT round(25, -1) FROM events', 'clickhouse-legacy').sql).toContain('round(25, -1)')
    expect(compile('SELECT round(25, -1) FROM events', 'sqlite').sql).toContain('((25 + 5) / 10) * 10')
  })

  test('- -1 is not written as --1 (a comment that would swallow the rest of the statement)', () => {
    for (const dialect of DIALECTS) {
      const { sql } = compile('SELECT - -1, -(-(properties.n)), round(-25, -1) FROM events WHERE - - 1 = 1', dialect)
      expect(sql).not.toContain('--')
      expect(sql).toContain('team_id = 42')
    }
  })

  test('JSONExtractInt: no Int64 past 2^63 (0), an integer exactly', () => {
    for (const dialect of DIALECTS) expect(compile("SELECT JSONExtractInt(properties, 'n') FROM events", dialect).sql).toContain('9223372036854775808')
    expect(compile("SELECT JSONExtractInt(properties, 'n') FROM events", 'clickhouse-legacy').sql).toContain("toInt64OrNull(nullIf(visitParamExtractRaw(properties, 'n'), ''))")
  })

  test('extract: the first group or the whole match, `.` across lines, on DuckDB as on ClickHouse', () => {
    expect(compile("SELECT extract(event, 'a(b)c') FROM events", 'duckdb').sql).toContain(", 1, 's')")
    expect(compile("SELECT extract(event, 'a(?:b)c') FROM events", 'duckdb').sql).toContain(", 0, 's')")
    expect(compile("SELECT extract(event, 'a(b)c') FROM events", 'clickhouse-legacy').sql).toContain("extract(event, 'a(b)c')")
  })
})

describe('the regular expressions extract() takes', () => {
  test('capturing groups counted (named ones too), not classes, escapes, \\Q…\\E or (?:…)', () => {
    const groups: [string, number][] = [
      ['(a)(b)', 2], ['(?:a)(b)', 1], ['(?P<x>a)', 1], ['(?<x>a)', 1], ['[(]a', 0], ['\\(a\\)', 0], ['\\Q(a)\\E', 0],
      ['(?i)a', 0], ['(?i:a)', 0], ['[]()]', 0], ['[^]()]', 0], ['[[:alpha:]()]', 0], ['((a)b)', 2], ['a{2,5}', 0], ['a{1000}', 0],
    ]
    for (const [pattern, n] of groups) expect([pattern, checkRegex(pattern)]).toEqual([pattern, n])
  })
  test('what RE2 has no meaning for is refused by name', () => {
    const refused: [string, RegExp][] = [
      ['(a)\\1', /back-references/], ['(?=a)', /looks around/], ['(?!a)', /looks around/], ['(?<=a)b', /looks around/], ['(?<!a)b', /looks around/],
      ['(?>a)', /atomic/], ['(?P=x)', /back-references/], ['a++', /possessive/], ['a*+', /possessive/], ['a{1001}', /more than 1000/],
      ['a{2,1001}', /more than 1000/], ['[a', /unclosed/], ['a\\', /lone/], ['a'.repeat(1001), /longer than 1000/],
      ['(a', /\( unclosed/], ['a)', /closes a group/], ['(a))(', /closes a group/],
    ]
    for (const [pattern, message] of refused) expect(() => checkRegex(pattern)).toThrow(message)
  })
})

describe('names and the parametric form', () => {
  test('names without regard to case, -If on every aggregate, the aggregates known as such', () => {
    expect(canonicalName('COUNTIF')).toBe('countIf')
    expect(canonicalName('argmaxif')).toBe('argMaxIf')
    expect(canonicalName('Date_Diff')).toBe('dateDiff')
    expect(isAggregate('sumIf')).toBe(true)
    expect(isAggregate('quantilesIf')).toBe(true)
    expect(isAggregate('multiIf')).toBe(false)
    expect(isAggregate('if')).toBe(false)
    expect(isAggregate('nope')).toBe(false)
  })
  test('name(parameters)(arguments) is parsed; a third list, * or DISTINCT among the parameters are not', () => {
    const select = parseQuery('SELECT quantile(0.9)(properties.n) FROM events')
    expect(select.columns[0].expr).toMatchObject({ k: 'call', name: 'quantile', params: [{ k: 'number', value: 0.9 }], args: [{ k: 'property', path: ['n'] }] })
    expect(() => parseQuery('SELECT quantile(0.9)(x)(y) FROM events')).toThrow(/more than one list of parameters/)
    expect(() => parseQuery('SELECT quantile(*)(x) FROM events')).toThrow(/cannot hold \*/)
    expect(() => parseQuery('SELECT quantile(DISTINCT 1)(x) FROM events')).toThrow(/cannot hold DISTINCT/)
    expect(refusal('SELECT lower(1)(event) FROM events')).toMatch(/lower\(\) takes no parameters/)
  })
})

describe('bounded', () => {
  test('-If nested deep: compiled within the depth limit, refused past it in milliseconds', () => {
    const nested = (n: number) => `SELECT countIf(${'('.repeat(n)}event = 'a'${')'.repeat(n)}) FROM events`
    for (const dialect of DIALECTS) expect(compile(nested(50), dialect).sql).toContain('count(')
    const started = performance.now()
    expect(() => compile(nested(5000), 'duckdb')).toThrow(QueryLimitError)
    expect(() => compile(`SELECT ${'sumIf('.repeat(20)}1${', 1)'.repeat(20)} FROM events`, 'duckdb')).toThrow(/inside another aggregate/)
    expect(performance.now() - started).toBeLessThan(1000)
  })
  test('round nested deep: refused by the statement budget (each level writes its number six times), not built', () => {
    const started = performance.now()
    expect(() => compile(`SELECT ${'round('.repeat(12)}properties.n${')'.repeat(12)} FROM events`, 'sqlite')).toThrow(/too complex/)
    expect(performance.now() - started).toBeLessThan(1000)
    expect(compile('SELECT round(round(properties.n, 2), 1) FROM events', 'sqlite').sql).toStartWith('SELECT ')
  })
  test('at most 20 quantile levels; groupArray at most 10,000 elements; one arrayJoin array per SELECT', () => {
    const levels = (n: number) => Array.from({ length: n }, (_, i) => (i / n).toFixed(3)).join(', ')
    for (const dialect of DIALECTS) expect(compile(`SELECT quantiles(${levels(20)})(properties.n) FROM events`, dialect).types).toEqual(['JSON'])
    expect(refusal(`SELECT quantiles(${levels(21)})(properties.n) FROM events`)).toMatch(/at most 20 levels, not 21/)
    expect(refusal('SELECT groupArray(0)(event) FROM events')).toMatch(/from 1 to 10000/)
    expect(refusal("SELECT arrayJoin(splitByChar(',', event)) AS a, arrayJoin(splitByChar(';', event)) AS b FROM events")).toMatch(/Only one array/)
    // the same array twice is one unrolling
    expect(compile("SELECT arrayJoin(splitByChar(',', event)) AS a, upper(arrayJoin(splitByChar(',', event))) FROM events", 'sqlite').sql.match(/json_each/g)?.length).toBe(1)
  })
})
