// The compiler's budget against the shapes that used to stall or crash it: a chain of aliases each doubling the
// last (2^n copies), flat chains of 50,000 terms (a stack overflow, 500), deep nesting of every kind, and statements
// past 256 KiB. Each is answered (compiled) or refused with a QueryError naming the limit, quickly; timings are
// printed, bounds asserted generously (the machine is shared).
import { describe, expect, test } from 'bun:test'
import { COMPILE_LIMITS } from './budget'
import { compileQuery, type CompiledQuery } from './compile'
import type { DialectName } from './dialect'
import { QueryDeadlineError, QueryError, QueryLimitError } from './errors'
import { LIMITS, parseQuery } from './parser'

const DIALECTS: DialectName[] = ['sqlite', 'clickhouse-legacy', 'clickhouse-modern']
const target = (dialect: DialectName, deadline?: number) => ({ dialect, teamId: 42, database: 'db', now: Date.UTC(2024, 0, 10), deadline })

/** Compiled, or the refusal: never another error (a RangeError is a stack overflow). */
function attempt(text: string, dialect: DialectName = 'sqlite'): { compiled?: CompiledQuery; refusal?: QueryLimitError | QueryError; ms: number } {
  const started = performance.now()
  try {
    const compiled = compileQuery(parseQuery(text), target(dialect))
    return { compiled, ms: performance.now() - started }
  } catch (error) {
    if (!(error instanceof QueryError)) throw error
    return { refusal: error, ms: performance.now() - started }
  }
}

const aliasChain = (levels: number) =>
  `select event AS a0, ${Array.from({ length: levels }, (_, i) => `concat(a${i}, a${i}) AS a${i + 1}`).join(', ')} from events`

/** The deepest nesting of parentheses in a compiled statement (what the store's own parser has to descend). */
function parenthesesDepth(sql: string): number {
  let depth = 0
  let deepest = 0
  for (const c of sql) {
    if (c === '(') deepest = Math.max(deepest, ++depth)
    else if (c === ')') depth--
  }
  return deepest
}

describe('aliases are compiled once and shared', () => {
  test('the 23-level doubling chain (574 bytes) is refused by the statement budget at once, on every store', () => {
    const text = aliasChain(23)
    expect(text.length).toBeLessThan(600)
    for (const dialect of DIALECTS) {
      const { refusal, ms } = attempt(text, dialect)
      console.log(`${dialect}: 23-level alias chain refused in ${ms.toFixed(1)} ms: ${refusal?.message}`)
      // the statement's size, found long before the time budget matters
      expect(refusal).toBeInstanceOf(QueryLimitError)
      expect((refusal as QueryLimitError).limit).toBe('statement')
      expect(refusal!.message).toContain(`larger than ${COMPILE_LIMITS.maxStatementBytes} bytes`)
      expect(ms).toBeLessThan(1000) // 15–27 s before
    }
  })

  test('a chain that fits compiles; its work grows with its length, not with 2^n', () => {
    for (const levels of [8, 12]) {
      const { compiled, ms } = attempt(aliasChain(levels))
      console.log(`${levels}-level alias chain: ${compiled!.sql.length} bytes of SQL in ${ms.toFixed(1)} ms`)
      expect(compiled!.sql.length).toBeLessThanOrEqual(COMPILE_LIMITS.maxStatementBytes)
      expect(compiled!.columns).toHaveLength(levels + 1)
    }
    // referenced 5,000 times from WHERE: refused by its size; without sharing, by the work (5,000 × 2^13 expressions)
    const many = `${aliasChain(12).replace(' from events', '')} from events where ${Array(5_000).fill("a12 = 'x'").join(' OR ')}`
    const { refusal } = attempt(many)
    expect((refusal as QueryLimitError).limit).toBe('statement')
  })

  test('an alias shared between clauses keeps its meaning (shadowing, GROUP BY, cycles)', () => {
    const { compiled } = attempt('SELECT toStartOfDay(timestamp) AS timestamp, toDate(timestamp) AS d, count() FROM events GROUP BY timestamp, d ORDER BY timestamp, d')
    expect(compiled!.columns).toEqual(['timestamp', 'd', 'count()'])
    // y reads x, x reads y: inside each, the other name is the column of that name, whatever was compiled first
    expect(attempt('SELECT y AS x, x AS y FROM events').refusal?.message).toMatch(/Unknown column/)
    expect(attempt('SELECT event AS x, concat(x, x) AS y FROM events WHERE y = x GROUP BY x, y ORDER BY y').compiled).toBeDefined()
  })
})

describe('flat chains of operators: answered or refused, never a stack overflow', () => {
  test('50,000 terms are refused by the token budget; 10,000 by the depth of the tree they make', () => {
    const flat = attempt(`select ${Array(50_000).fill('1').join('+')} from events`)
    expect((flat.refusal as QueryLimitError).limit).toBe('tokens')
    for (const op of ['+', '*', '-', '/', '%', '=', '<', '||']) {
      const text = op === '||'
        ? `select 1 from events where ${Array(2_000).fill('event IS NULL').join(' IS NULL = ')}`
        : `select ${Array(10_000).fill('1').join(` ${op} `)} from events`
      const { refusal, ms } = attempt(text)
      console.log(`10,000 terms of ${op}: ${refusal?.message} (${ms.toFixed(1)} ms)`)
      expect((refusal as QueryLimitError).limit).toBe('depth')
      expect(refusal!.message).toContain(`deeper than ${LIMITS.maxDepth} levels`)
    }
  })

  test('13,333 ANDs are refused by the token budget; 7,000 ANDs or ORs are answered, written balanced', () => {
    const refused = attempt(`select 1 from events where ${Array(13_333).fill('1 = 1').join(' AND ')}`)
    expect((refused.refusal as QueryLimitError).limit).toBe('tokens')
    for (const op of ['AND', 'OR']) {
      for (const dialect of DIALECTS) {
        const { compiled, ms } = attempt(`select count() from events where ${Array(7_000).fill("event = 'x'").join(` ${op} `)}`, dialect)
        const depth = parenthesesDepth(compiled!.sql)
        console.log(`${dialect}: 7,000 × ${op} compiled in ${ms.toFixed(1)} ms, ${compiled!.sql.length} bytes, parentheses ${depth} deep`)
        expect(depth).toBeLessThan(25) // log2(7000) ≈ 13 levels of the chain, a few of the statement around it
      }
    }
  })
})

describe('deep nesting of every kind', () => {
  const N = 10_000
  const shapes: [string, string][] = [
    ['parentheses', `select ${'('.repeat(N)}1${')'.repeat(N)} from events`],
    ['function calls', `select ${'lower('.repeat(N)}event${')'.repeat(N)} from events`],
    ['NOT', `select 1 from events where ${'NOT '.repeat(N)}1`],
    ['unary minus', `select ${'-('.repeat(N)}1${')'.repeat(N)} from events`],
    ['minus signs', `select ${'- '.repeat(N)}1 from events`],
    ['CASE', `select ${'CASE WHEN '.repeat(N)}1${' THEN 1 END'.repeat(N)} from events`],
    ['IN lists', `select ${'1 IN ('.repeat(N)}1${')'.repeat(N)} from events`],
    ['BETWEEN', `select 1 from events where ${Array(N / 10).fill('1').join(' BETWEEN 0 AND 2 BETWEEN 0 AND ')} BETWEEN 0 AND 2`],
    ['IS NULL', `select event${' IS NULL'.repeat(N)} from events`],
    ['subqueries', `select 1 from ${'(select 1 from '.repeat(50)}events${')'.repeat(50)}`],
    ['interval', `select now() ${'+ INTERVAL 1 DAY '.repeat(N)} from events`],
  ]
  for (const [name, text] of shapes) {
    test(name, () => {
      for (const dialect of DIALECTS) {
        const { refusal, ms } = attempt(text, dialect)
        if (dialect === 'sqlite') console.log(`${name}: ${refusal?.message} (${ms.toFixed(1)} ms)`)
        expect(refusal).toBeInstanceOf(QueryLimitError)
        expect(refusal!.message).toMatch(/deeper than|more than \d+ tokens/)
      }
    })
  }

  test('64 levels are accepted; toDateTime(toDateTime(…)) compiles its argument once, not 2^n times', () => {
    expect(attempt(`select ${'lower('.repeat(31)}event${')'.repeat(31)} from events`).compiled).toBeDefined()
    expect(attempt(`select ${Array(60).fill('1').join(' + ')} from events`).compiled).toBeDefined()
    const { compiled, ms } = attempt(`select ${'toDateTime('.repeat(31)}timestamp${')'.repeat(31)} from events`)
    console.log(`31 nested toDateTime(): ${ms.toFixed(1)} ms`)
    expect(compiled).toBeDefined()
    expect(ms).toBeLessThan(1000)
  })
})

describe('the statement budget', () => {
  test('a statement past 256 KiB is refused, its bound values counted', () => {
    // 200 KB of text bound once (SQLite, current ClickHouse) fits; written out twice (ClickHouse 18.16) it does not
    const text = `select '${'x'.repeat(200 * 1024)}' AS s, concat(s, s) AS t from events`
    expect(attempt(text, 'sqlite').compiled).toBeDefined()
    expect(attempt(text, 'clickhouse-modern').compiled).toBeDefined()
    expect((attempt(text, 'clickhouse-legacy').refusal as QueryLimitError).limit).toBe('statement')
    // wide rather than deep: 100 columns, each times written out as text 90 times
    const wide = `select ${Array.from({ length: 100 }, (_, i) => `concat(${Array(90).fill('timestamp').join(', ')}) AS c${i}`).join(', ')} from events`
    expect(wide.length).toBeLessThan(LIMITS.maxQueryBytes)
    for (const dialect of DIALECTS) expect((attempt(wide, dialect).refusal as QueryLimitError).limit).toBe('statement')
  })

  test('query text over 256 KiB is refused before it is read', () => {
    const { refusal, ms } = attempt(`select '${'x'.repeat(LIMITS.maxQueryBytes)}' from events`)
    expect((refusal as QueryLimitError).limit).toBe('text')
    expect(ms).toBeLessThan(1000)
  })
})

describe('the deadline', () => {
  const big = `select count() from events where ${Array(5_000).fill("event = 'x'").join(' OR ')}`
  test('parsing and compiling stop once the deadline has passed', () => {
    const past = performance.now() - 1
    expect(() => parseQuery(big, { deadline: past })).toThrow(QueryDeadlineError)
    const parsed = parseQuery(big)
    expect(() => compileQuery(parsed, target('sqlite', past))).toThrow(QueryDeadlineError)
    expect(compileQuery(parsed, target('sqlite', performance.now() + 60_000)).sql).toStartWith('SELECT')
  })
})
