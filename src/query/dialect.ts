// The store-specific pieces of compiled SQL: literals (bound parameters where the store has them), the events
// table and its tenant condition, person_id through the distinct-id mapping, property extraction, time arithmetic.
import { stringLiteral } from '../events/dialect'
import { QueryError } from './errors'

export type DialectName = 'sqlite' | 'duckdb' | 'clickhouse-legacy' | 'clickhouse-modern'

/** The embedded stores (SQLite, DuckDB): times are epoch milliseconds, literals are numbered parameters (?1). */
export const isEmbedded = (dialect: DialectName): boolean => dialect === 'sqlite' || dialect === 'duckdb'
export type TimeType = 'DateTime' | 'Date'
export type PropertyFlavor = 'raw' | 'string' | 'number'

export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000

/** Literal values the compiled SQL refers to: SQLite's numbered parameters, ClickHouse's {name:Type} ones. */
export class Params {
  readonly sqlite: (string | number)[] = []
  readonly clickhouse: Record<string, string> = {}
  private readonly seen = new Map<string, string>()
  constructor(private readonly dialect: DialectName) {}

  /**
   * Keep only the parameters `sql` refers to, renumbered (a literal may be read and then replaced, e.g. a time
   * literal folded to a constant; SQLite refuses values nothing refers to). Our own SQL holds no '?' or '{p'
   * elsewhere: every user value is a parameter.
   */
  prune(sql: string): string {
    if (isEmbedded(this.dialect)) {
      // a scan by indexOf, not a replace with a callback: a statement may refer to thousands of parameters
      const renumbered = new Int32Array(this.sqlite.length + 1) // 0: not seen yet
      const kept: (string | number)[] = []
      const pieces: string[] = []
      let copied = 0
      let changed = false
      for (let at = sql.indexOf('?'); at !== -1; at = sql.indexOf('?', at + 1)) {
        let end = at + 1
        while (end < sql.length && sql.charCodeAt(end) >= 48 && sql.charCodeAt(end) <= 57) end++
        if (end === at + 1) continue
        const old = Number(sql.slice(at + 1, end))
        if (old < 1 || old > this.sqlite.length) continue
        let now = renumbered[old]
        if (now === 0) {
          kept.push(this.sqlite[old - 1])
          now = kept.length
          renumbered[old] = now
        }
        if (now !== old) changed = true
        pieces.push(sql.slice(copied, at + 1), String(now))
        copied = end
      }
      this.sqlite.length = 0
      for (const value of kept) this.sqlite.push(value)
      if (!changed) return sql
      pieces.push(sql.slice(copied))
      return pieces.join('')
    }
    if (this.dialect === 'clickhouse-modern') {
      const used = new Set([...sql.matchAll(/\{(p\d+):String\}/g)].map((m) => m[1]))
      for (const name of Object.keys(this.clickhouse)) if (!used.has(name)) delete this.clickhouse[name]
    }
    return sql
  }

  /** The same value always gets the same placeholder, so equal expressions compile to equal SQL (GROUP BY). */
  string(value: string): string {
    if (this.dialect === 'clickhouse-legacy') return stringLiteral(value) // 18.16 has no query parameters
    const known = this.seen.get(value)
    if (known) return known
    let placeholder: string
    if (isEmbedded(this.dialect)) {
      this.sqlite.push(value)
      placeholder = `?${this.sqlite.length}`
      if (this.sqlite.length > 30_000) throw new QueryError('The query holds too many string literals (at most 30000)')
    } else {
      const name = `p${this.seen.size}`
      this.clickhouse[name] = value
      placeholder = `{${name}:String}`
    }
    this.seen.set(value, placeholder)
    return placeholder
  }
}

export function numberSql(value: number): string {
  if (!Number.isFinite(value)) throw new QueryError('Number out of range')
  if (Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER) return String(value)
  // a float: always with a point or an exponent, never an integer to SQLite (integer division)
  const text = String(value)
  return /[.e]/.test(text) ? text : `${text}.0`
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0')
export function utcText(ms: number, withMillis: boolean): string {
  const d = new Date(ms)
  const base = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  return withMillis ? `${base}.${pad(d.getUTCMilliseconds(), 3)}` : base
}

/** ClickHouse's month arithmetic (the day clamped to the month's last), also used to fold constants. */
export function addMonths(ms: number, months: number): number {
  const d = new Date(ms)
  const total = d.getUTCFullYear() * 12 + d.getUTCMonth() + months
  const year = Math.floor(total / 12)
  const month = total - year * 12
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  return Date.UTC(year, month, Math.min(d.getUTCDate(), last), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds())
}

/** The events of one select level: how its table, columns and person mapping are written. */
export interface EventsScope {
  from: string
  tenant: string
  column(name: string): string
  personId(): string
}

/** The embedded stores' events table and person mapping (the same tables on SQLite and DuckDB). */
export function embeddedEvents(n: number, teamId: number, withPerson: boolean): EventsScope {
  const e = `_e${n}`
  const p = `_p${n}`
  const join = withPerson ? ` LEFT JOIN person_distinct_id AS ${p} ON ${p}.team_id = ${e}.team_id AND ${p}.distinct_id = ${e}.distinct_id` : ''
  return {
    from: `events AS ${e}${join}`,
    tenant: `${e}.team_id = ${Math.trunc(teamId)}`,
    column: (name) => `${e}.${name}`,
    personId: () => `${p}.person_id`,
  }
}

export function clickhouseEvents(database: string, teamId: number, withPerson: boolean, n = 0): EventsScope {
  const team = Math.trunc(teamId)
  // The latest version of each distinct id's row (the table is a ReplacingMergeTree; unmerged parts may hold older
  // ones), unless that is a tombstone (an erased person). In a cluster the mapping is on every node, so each shard joins its own copy (docs/query.md).
  const join = withPerson
    ? ` ANY LEFT JOIN (SELECT distinct_id, argMax(person_id, version) AS _pdi_person, 1 AS _pdi_found FROM ${database}.person_distinct_id WHERE team_id = ${team} GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0) AS _pdi${n} USING distinct_id`
    : ''
  return {
    from: `${database}.events${join}`,
    tenant: `team_id = ${team}`,
    column: (name) => (name === 'uuid' ? 'toString(uuid)' : name),
    personId: () => `if(_pdi_found = 1, toString(_pdi_person), NULL)`,
  }
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
const LOWER = 'abcdefghijklmnopqrstuvwxyz'

/** lower()/upper() of ASCII letters only, as ClickHouse's and SQLite's (DuckDB's own know every alphabet). */
export function asciiCase(dialect: DialectName, sql: string, to: 'lower' | 'upper'): string {
  if (dialect !== 'duckdb') return `${to}(${sql})`
  return to === 'lower' ? `translate(${sql}, '${UPPER}', '${LOWER}')` : `translate(${sql}, '${LOWER}', '${UPPER}')`
}

/** A SQLite JSON path for these keys ($."a"."b"); a key holding a double quote cannot be written in one. */
export function sqliteJsonPath(path: string[]): string {
  for (const key of path) {
    if (/["\\\0-\x1f]/.test(key)) throw new QueryError(`Property name ${JSON.stringify(key)} holds a character property access does not support`)
  }
  return `$${path.map((k) => `."${k}"`).join('')}`
}

/** A JSON pointer for these keys (/a/b, ~ and / escaped): DuckDB's path that takes any key. */
export function jsonPointer(path: string[]): string {
  return path.map((k) => `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')
}

export function propertySql(dialect: DialectName, params: Params, source: string, path: string[], flavor: PropertyFlavor): string {
  if (dialect === 'duckdb') {
    const p = params.string(jsonPointer(path))
    if (flavor === 'raw') return `CAST(json_extract(${source}, ${p}) AS VARCHAR)`
    if (flavor === 'number') return `(CASE WHEN json_type(${source}, ${p}) IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN CAST(json_extract(${source}, ${p}) AS DOUBLE) END)`
    return `(CASE json_type(${source}, ${p}) WHEN 'VARCHAR' THEN json_extract_string(${source}, ${p}) WHEN 'NULL' THEN NULL ELSE CAST(json_extract(${source}, ${p}) AS VARCHAR) END)`
  }
  if (dialect === 'sqlite') {
    const p = params.string(sqliteJsonPath(path))
    if (flavor === 'raw') return `(${source} -> ${p})`
    if (flavor === 'number') return `(CASE WHEN json_type(${source}, ${p}) IN ('integer', 'real') THEN json_extract(${source}, ${p}) END)`
    return `(CASE json_type(${source}, ${p}) WHEN 'text' THEN json_extract(${source}, ${p}) WHEN 'null' THEN NULL ELSE ${source} -> ${p} END)`
  }
  const keys = path.map((k) => params.string(k))
  let raw: string
  let unescaped: string
  if (dialect === 'clickhouse-modern') {
    raw = `JSONExtractRaw(${source}, ${keys.join(', ')})`
    unescaped = `JSONExtractString(${source}, ${keys.join(', ')})`
  } else {
    // 18.16 has only the simple visitParam functions (docs/query.md: a key is found at any depth)
    let parent = source
    for (const k of keys.slice(0, -1)) parent = `visitParamExtractRaw(${parent}, ${k})`
    raw = `visitParamExtractRaw(${parent}, ${keys[keys.length - 1]})`
    unescaped = `visitParamExtractString(${parent}, ${keys[keys.length - 1]})`
  }
  if (flavor === 'raw') return `nullIf(${raw}, '')`
  if (flavor === 'number') return `toFloat64OrNull(${raw})`
  return `multiIf(${raw} IN ('', 'null'), NULL, startsWith(${raw}, '"'), ${unescaped}, ${raw})`
}

export function timeLiteral(dialect: DialectName, ms: number, type: TimeType): string {
  if (isEmbedded(dialect)) return String(type === 'Date' ? Math.floor(ms / DAY_MS) * DAY_MS : Math.trunc(ms))
  if (type === 'Date') return `toDate('${utcText(ms, false).slice(0, 10)}')`
  if (dialect === 'clickhouse-modern') return `toDateTime64('${utcText(ms, true)}', 3, 'UTC')`
  return `toDateTime('${utcText(ms, false)}', 'UTC')`
}

/**
 * Arrays (docs/query.md "Arrays") are the store's own: ClickHouse's Array, DuckDB's list, and on SQLite, which has
 * none, JSON text. arrayJoin() unrolls one: ClickHouse in place (the same expression everywhere in the SELECT, which
 * it evaluates once); SQLite as a table of its elements joined beside the row; DuckDB in a projection of the rows
 * beside their columns (as a lateral join DuckDB held every column of the row once for each element in memory: a
 * property of 20,000 pieces in a 90 KB event ran a 256 MiB store out of memory).
 * `events`: the level reads events, their table alone (`base`) and the tenant condition; null for a subquery.
 */
export function arrayJoinSource(dialect: DialectName, source: string, array: string, level: number, events: { base: string; tenant: string } | null): string {
  if (dialect === 'sqlite') return `${source}, json_each(${array}) AS _j${level}`
  if (dialect !== 'duckdb') return source
  if (!events) return `(SELECT _t${level}.*, unnest(${array}) AS _j${level} FROM ${source}) AS _t${level}`
  // the person mapping joined outside, for the level's person_id; inside too when the array is made of it
  const join = source.slice(events.base.length)
  const inner = array.includes(`_p${level}.`) ? source : events.base
  return `(SELECT _e${level}.*, unnest(${array}) AS _j${level} FROM ${inner} WHERE ${events.tenant}) AS _e${level}${join}`
}

export function arrayJoinElement(dialect: DialectName, array: string, level: number, events: boolean): string {
  if (dialect === 'sqlite') return `_j${level}.value`
  if (dialect === 'duckdb') return `${events ? '_e' : '_t'}${level}._j${level}`
  return `arrayJoin(${array})`
}

/** The characters JSON escapes in a string, as ClickHouse text: written out one by one (18.16 has no JSON encoder). */
const JSON_ESCAPES: [string, string][] = [
  ['\\\\', '\\\\\\\\'],
  ['"', '\\\\"'],
  ...Array.from({ length: 32 }, (_, code): [string, string] => {
    const hex = code.toString(16).padStart(2, '0')
    const short: Record<number, string> = { 8: 'b', 9: 't', 10: 'n', 12: 'f', 13: 'r' }
    return [`\\x${hex}`, short[code] ? `\\\\${short[code]}` : `\\\\u00${hex}`]
  }),
]

/** An array as JSON text, the same on every store once decoded (the answer's column; its type is JSON). */
export function arrayAsJson(dialect: DialectName, sql: string, element: 'String' | 'Int' | 'Float'): string {
  if (dialect === 'sqlite') return sql
  if (dialect === 'duckdb') return `CAST(to_json(${sql}) AS VARCHAR)`
  let item: string
  if (element === 'String') {
    item = '_x'
    for (const [from, to] of JSON_ESCAPES) item = `replaceAll(${item}, '${from}', '${to}')`
    item = `concat('"', ${item}, '"')`
  } else {
    // ClickHouse divides by zero into inf and nan, which JSON has no words for; the other stores answer NULL there
    item = element === 'Float' ? "if(isFinite(_x), toString(_x), 'null')" : 'toString(_x)'
  }
  return `concat('[', arrayStringConcat(arrayMap(_x -> ${item}, ${sql}), ','), ']')`
}

/**
 * JSONExtractInt(properties, …): a JSON number's integer part (towards zero), 0 for anything else and for a number
 * whose magnitude, as a double, is 2^63 or more (it has no Int64); integers within that range exactly.
 */
export function jsonExtractIntSql(dialect: DialectName, params: Params, source: string, path: string[]): string {
  const number = propertySql(dialect, params, source, path, 'number')
  if (dialect === 'sqlite') {
    // SQLite's number flavour keeps an integer an integer, and CAST takes a real's integer part
    return `coalesce(CASE WHEN abs(CAST(${number} AS REAL)) < 9223372036854775808.0 THEN CAST(${number} AS INTEGER) END, 0)`
  }
  if (dialect === 'duckdb') {
    const p = params.string(jsonPointer(path))
    return `(CASE WHEN abs(${number}) < 9223372036854775808.0 THEN (CASE WHEN json_type(${source}, ${p}) = 'BIGINT' THEN CAST(json_extract(${source}, ${p}) AS BIGINT) ELSE CAST(trunc(${number}) AS BIGINT) END) ELSE 0 END)`
  }
  // the raw JSON text read as an integer when it is one (exact), else the double's integer part
  const raw = propertySql(dialect, params, source, path, 'raw')
  return `if(ifNull(abs(${number}) < 9223372036854775808., 0), ifNull(toInt64OrNull(${raw}), toInt64(trunc(${number}))), toInt64(0))`
}
