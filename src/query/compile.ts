// The checked tree → one store's SQL. Names are resolved here (columns of events or of the subquery, SELECT
// aliases), functions checked against the allowed list, aggregates checked, literals bound as parameters, and the
// tenant condition added to every read of `events`, whatever the text said. Pure: no I/O.
// Within a budget: an alias is compiled once and its SQL shared by every reference (a chain of aliases each
// doubling the last costs its length, not 2^n), the statement's size, the tree's depth and the work done are
// bounded, and the caller's deadline is checked as it goes (budget.ts, docs/query.md "Limits").
import type { Expr, Select } from './ast'
import { balanced, CompileBudget, COMPILE_LIMITS, fitsStatement } from './budget'
import { QueryError } from './errors'
import {
  arrayAsJson, arrayJoinElement, arrayJoinSource, asciiCase, clickhouseEvents, embeddedEvents, isEmbedded, numberSql,
  Params, propertySql, timeLiteral, type DialectName, type EventsScope, type PropertyFlavor, type TimeType,
} from './dialect'
import { canonicalName, compileCall, isAggregate } from './functions'
import { asciiLower, likeToGlob, likeToRegex, parseTimeLiteral, shift, UNIT_MS } from './literals'

export { parseTimeLiteral, shift }

export type ValueType = 'String' | 'Int' | 'Float' | 'Bool' | 'DateTime' | 'Date' | 'JSON' | 'UUID' | 'Null' | 'Interval'
/** What an array holds (docs/query.md "Arrays"): text or numbers, never NULL, never another array. */
export type ElementType = 'String' | 'Int' | 'Float'

export interface Compiled {
  sql: string
  type: ValueType
  /** holds an aggregate */
  agg: boolean
  /** a column used outside any aggregate and not grouped (null when none) */
  loose: string | null
  /** a constant point in time (folded: now(), today(), literals, ± INTERVAL) */
  time?: number
  /** INTERVAL n UNIT */
  interval?: { count: number; unit: string }
  /** a string literal's value */
  literal?: string
  /**
   * an array of these (type 'JSON'): the store's own array (ClickHouse), list (DuckDB) or JSON text (SQLite), written
   * as JSON text only where the top SELECT answers it; accepted only where an array is asked for (acceptArray)
   */
  array?: ElementType
}

export interface Target {
  dialect: DialectName
  teamId: number
  /** the ClickHouse database */
  database?: string
  /** "now" for now() and today(), epoch ms */
  now: number
  /** a `performance.now()` past which compiling stops (QueryDeadlineError) */
  deadline?: number
}

export interface CompiledQuery {
  sql: string
  params: Params
  columns: string[]
  types: ValueType[]
  limit: number
  offset: number
}

export const DEFAULT_LIMIT = 100
export const MAX_LIMIT = 50_000

const EVENT_COLUMNS: Record<string, ValueType> = {
  uuid: 'UUID',
  event: 'String',
  distinct_id: 'String',
  timestamp: 'DateTime',
  created_at: 'DateTime',
  properties: 'String',
  person_id: 'UUID',
}

type Want = 'any' | PropertyFlavor

interface Output {
  name: string
  sql: string
  type: ValueType
  array?: ElementType
}

interface Level {
  id: number
  top: boolean
  events: EventsScope | null
  usesPerson: boolean
  /** the subquery's columns, by name */
  outputs: Map<string, Output> | null
  sourceNames: Set<string>
  aliases: Map<string, Expr>
  expanding: Set<string>
  /** aliases compiled already, by name, clause and wanted flavour, with the depth their tree adds */
  compiledAliases: Map<string, { compiled: Compiled; height: number }>
  groups: Set<string> | null
  /** the lengths of `groups`' members: most expressions are not looked up (a lookup flattens the string) */
  groupLengths: Set<number>
  columns: Select['columns']
  /**
   * the array this level's arrayJoin() unrolls (one per level: two would multiply each other's rows), as its SQL,
   * and how its element is read
   */
  arrayJoin: { array: string; element: string } | null
}

export class Compiler {
  readonly params: Params
  private levels = 0
  private readonly budget: CompileBudget
  /** times a name was read as a column because the alias of that name was being compiled */
  private shadowed = 0

  constructor(private readonly target: Target) {
    this.params = new Params(target.dialect)
    this.budget = new CompileBudget(target.deadline)
  }

  get dialect(): DialectName {
    return this.target.dialect
  }

  get now(): number {
    return this.target.now
  }

  compileQuery(query: Select): CompiledQuery {
    const limit = Math.min(query.limit ?? DEFAULT_LIMIT, MAX_LIMIT)
    const offset = query.offset ?? 0
    const { sql, outputs } = this.select(query, true, { limit: limit + 1, offset })
    const pruned = this.params.prune(sql)
    fitsStatement([pruned, ...this.params.sqlite.map(String), ...Object.values(this.params.clickhouse)])
    return { sql: pruned, params: this.params, columns: outputs.map((o) => o.name), types: outputs.map((o) => o.type), limit, offset }
  }


  private select(q: Select, top: boolean, page?: { limit: number; offset: number }): { sql: string; outputs: Output[] } {
    const id = this.levels++
    let source = ''
    const level: Level = {
      id, top, events: null, usesPerson: false, outputs: null, sourceNames: new Set(), aliases: new Map(),
      expanding: new Set(), compiledAliases: new Map(), groups: null, groupLengths: new Set(), columns: q.columns,
      arrayJoin: null,
    }
    if (q.from.k === 'subquery') {
      const sub = this.select(q.from.query, false)
      const t = `_t${id}`
      level.outputs = new Map()
      for (const o of sub.outputs) {
        if (level.outputs.has(o.name)) throw new QueryError(`The subquery has two columns named ${o.name}: give them different aliases`)
        level.outputs.set(o.name, { ...o, sql: isEmbedded(this.dialect) ? `${t}.${o.sql}` : o.sql })
      }
      source = `(${sub.sql}) AS ${t}`
      if (q.from.alias) level.sourceNames.add(q.from.alias)
    } else {
      level.events = isEmbedded(this.dialect) ? embeddedEvents(id, this.target.teamId, true) : clickhouseEvents(this.target.database!, this.target.teamId, true, id)
      level.sourceNames.add('events')
      if (q.from.alias) level.sourceNames.add(q.from.alias)
    }
    for (const c of q.columns) if (c.alias) {
      if (level.aliases.has(c.alias)) throw new QueryError(`The alias ${c.alias} is given twice`)
      level.aliases.set(c.alias, c.expr)
    }
    const where = q.where ? this.expr(q.where, level, 'where', 'any') : null
    if (where?.agg) throw new QueryError('Aggregate functions are not allowed in WHERE (use HAVING)')
    const groupBy = q.groupBy.map((g) => {
      const c = this.item(g, level, 'group')
      if (c.agg) throw new QueryError('Aggregate functions are not allowed in GROUP BY')
      // the stores order and compare arrays differently (SQLite holds them as JSON text)
      if (c.array) throw new QueryError('GROUP BY an array is not supported (arrayJoin() it, or group by what it is made of)')
      return c
    })
    fitsStatement(groupBy.map((g) => g.sql))
    level.groups = new Set(groupBy.map((g) => g.sql))
    level.groupLengths = new Set(groupBy.map((g) => g.sql.length))
    // within its own expression an alias names the column it may shadow (toStartOfDay(timestamp) AS timestamp)
    const columns = q.columns.map((c) => {
      if (c.alias) level.expanding.add(c.alias)
      try {
        return this.item(c.expr, level, 'select')
      } finally {
        if (c.alias) level.expanding.delete(c.alias)
      }
    })
    for (const c of columns) if (c.type === 'Interval') throw new QueryError('INTERVAL can only be added to or subtracted from a date or time')
    const having = q.having ? this.expr(q.having, level, 'having', 'any') : null
    const orderBy = q.orderBy.map((o) => ({ c: this.item(o.expr, level, 'order'), desc: o.desc }))
    for (const o of orderBy) if (o.c.array) throw new QueryError('ORDER BY an array is not supported')
    const aggregated = groupBy.length > 0 || having !== null || columns.some((c) => c.agg)
    if (aggregated) {
      for (const c of [...columns, ...(having ? [having] : []), ...orderBy.map((o) => o.c)]) {
        if (c.loose) throw new QueryError(`${c.loose} must be in GROUP BY or inside an aggregate function`)
      }
    }
    if (level.events) {
      const scope = isEmbedded(this.dialect)
        ? embeddedEvents(id, this.target.teamId, level.usesPerson)
        : clickhouseEvents(this.target.database!, this.target.teamId, level.usesPerson, id)
      source = scope.from
    }
    // the embedded stores unroll an array beside each row (ClickHouse's arrayJoin() does it in place)
    if (level.arrayJoin) {
      const events = level.events && isEmbedded(this.dialect) ? { base: embeddedEvents(id, this.target.teamId, false).from, tenant: level.events.tenant } : null
      source = arrayJoinSource(this.dialect, source, level.arrayJoin.array, id, events)
    }
    // the answer holds an array as JSON text, the service decodes it; a subquery hands the store's own array on
    const selected = columns.map((c) => (top && c.array ? arrayAsJson(this.dialect, c.sql, c.array) : c.sql))
    fitsStatement([source, ...selected, where?.sql ?? '', having?.sql ?? '', ...orderBy.map((o) => o.c.sql)])
    const outputs: Output[] = q.columns.map((c, i) => ({ name: c.alias ?? c.text, sql: `_q${id}_${i}`, type: columns[i].type, ...(columns[i].array && !top ? { array: columns[i].array } : {}) }))
    const parts = [`SELECT ${q.distinct ? 'DISTINCT ' : ''}${selected.map((c, i) => `${c} AS ${outputs[i].sql}`).join(', ')}`, `FROM ${source}`]
    const conditions = [level.events?.tenant, where ? `(${where.sql})` : undefined].filter(Boolean)
    if (conditions.length) parts.push(`WHERE ${conditions.join(' AND ')}`)
    if (groupBy.length) parts.push(`GROUP BY ${groupBy.map((g) => g.sql).join(', ')}`)
    if (having) parts.push(`HAVING ${having.sql}`)
    if (orderBy.length) parts.push(`ORDER BY ${orderBy.map((o) => `${o.c.sql} ${o.desc ? 'DESC' : 'ASC'} NULLS LAST`).join(', ')}`)
    const limit = page?.limit ?? q.limit
    const offset = page?.offset ?? q.offset
    if (limit !== null) parts.push(`LIMIT ${limit}`)
    else if (offset !== null && this.dialect === 'sqlite') parts.push('LIMIT -1')
    if (offset) parts.push(`OFFSET ${offset}`)
    return { sql: parts.join(' '), outputs }
  }

  /** A SELECT, GROUP BY or ORDER BY item: a position (ORDER BY 2), an alias, or an expression. */
  private item(e: Expr, level: Level, clause: 'select' | 'group' | 'order'): Compiled {
    if (clause !== 'select' && e.k === 'number' && Number.isInteger(e.value)) {
      const column = level.columns[e.value - 1]
      if (!column) throw new QueryError(`${clause === 'group' ? 'GROUP' : 'ORDER'} BY ${e.value}: there is no column ${e.value}`)
      return this.item(column.expr, level, 'select')
    }
    if (e.k === 'name' && e.parts.length === 1 && level.aliases.has(e.parts[0])) {
      if (!level.expanding.has(e.parts[0])) return this.expandAlias(e.parts[0], level, clause, 'item')
      this.shadowed++
    }
    // a bare property at the top level comes back as sent (its JSON, decoded by the service)
    return this.expr(e, level, clause, e.k === 'property' && level.top ? 'raw' : 'any', false, clause === 'select')
  }

  /**
   * An alias's expression, compiled once per clause and flavour and then shared: its SQL is the same string (its
   * size counted where it is used). Not kept when a name in it was read as the column the alias shadows (then it
   * depends on which aliases were being compiled around it).
   */
  private expandAlias(name: string, level: Level, clause: string, want: Want | 'item'): Compiled {
    const key = `${name}\0${clause}\0${want}`
    const known = level.compiledAliases.get(key)
    const budget = this.budget
    if (known) {
      budget.reach(budget.depth + known.height)
      return known.compiled
    }
    const shadowedBefore = this.shadowed
    const deepestBefore = budget.deepest
    budget.deepest = budget.depth
    level.expanding.add(name)
    try {
      const e = level.aliases.get(name)!
      // an alias may name an array: whether one is accepted is decided where the alias is used
      const compiled = want === 'item' ? this.item(e, level, 'select') : this.expr(e, level, clause, want, false, true)
      if (this.shadowed === shadowedBefore) level.compiledAliases.set(key, { compiled, height: budget.deepest - budget.depth })
      return compiled
    } finally {
      level.expanding.delete(name)
      budget.deepest = Math.max(budget.deepest, deepestBefore)
    }
  }

  /** `acceptArray`: the caller takes an array (a SELECT column, arrayJoin(), length()); elsewhere one is refused. */
  expr(e: Expr, level: Level, clause: string, want: Want, inAggregate = false, acceptArray = false): Compiled {
    this.budget.enter()
    try {
      const c = this.node(e, level, clause, want, inAggregate)
      if (c.array && !acceptArray) throw new QueryError(`${arrayName(e)} is an array: only arrayJoin() and length() take one, or a SELECT column`)
      if (c.sql.length > COMPILE_LIMITS.maxStatementBytes) fitsStatement([c.sql])
      if (c.loose && level.groupLengths.has(c.sql.length) && level.groups?.has(c.sql)) return { ...c, loose: null }
      return c
    } finally {
      this.budget.leave()
    }
  }

  private node(e: Expr, level: Level, clause: string, want: Want, inAggregate: boolean): Compiled {
    const sub = (x: Expr, w: Want = 'any') => this.expr(x, level, clause, w, inAggregate)
    const leaf = (sql: string, type: ValueType): Compiled => ({ sql, type, agg: false, loose: null })
    switch (e.k) {
      case 'number':
        return leaf(numberSql(e.value), Number.isInteger(e.value) && !/[.eE]/.test(e.text) ? 'Int' : 'Float')
      case 'string':
        return { ...leaf(this.params.string(e.value), 'String'), literal: e.value }
      case 'bool':
        return leaf(e.value ? '1' : '0', 'Bool')
      case 'null':
        return leaf('NULL', 'Null')
      case 'name':
        return this.name(e.parts, level, clause, want)
      case 'property':
        return this.property(e.table, e.path, level, want === 'any' ? 'string' : want)
      case 'unary': {
        if (e.op === 'NOT') {
          const a = sub(e.arg)
          return { ...a, sql: `(NOT ${a.sql})`, type: 'Bool' }
        }
        const a = sub(e.arg, 'number')
        if (e.arg.k === 'number') return leaf(`-${a.sql}`, a.type)
        // a space: `- -1` written as --1 would start a comment that swallows the rest of the statement
        return { ...a, sql: `(- ${a.sql})`, type: a.type === 'Int' ? 'Int' : 'Float' }
      }
      case 'binary':
        if (e.op === 'AND' || e.op === 'OR') return this.logical(e, level, clause, inAggregate)
        return this.binary(e.op, e.left, e.right, level, clause, inAggregate)
      case 'isNull': {
        const a = sub(e.arg)
        return { ...a, sql: `(${a.sql} IS ${e.not ? 'NOT ' : ''}NULL)`, type: 'Bool' }
      }
      case 'in': {
        const items = e.list.map((x) => sub(x))
        const numeric = items.every((i) => i.type === 'Int' || i.type === 'Float')
        const a = this.comparable(e.arg, items[0], level, clause, inAggregate, numeric)
        const list = items.map((i) => this.coerceTo(a, i))
        fitsStatement([a.sql, ...list])
        return combine([a, ...items], `(${a.sql} ${e.not ? 'NOT IN' : 'IN'} (${list.join(', ')}))`, 'Bool')
      }
      case 'between': {
        const low = sub(e.low)
        const high = sub(e.high)
        const a = this.comparable(e.arg, low, level, clause, inAggregate, low.type === 'Int' || low.type === 'Float')
        return combine([a, low, high], `(${a.sql} ${e.not ? 'NOT BETWEEN' : 'BETWEEN'} ${this.coerceTo(a, low)} AND ${this.coerceTo(a, high)})`, 'Bool')
      }
      case 'like':
        return this.like(e, level, clause, inAggregate)
      case 'interval': {
        const n = sub(e.count)
        if (e.count.k !== 'number' || !Number.isInteger(e.count.value)) throw new QueryError('INTERVAL takes a whole number')
        return { ...n, type: 'Interval', interval: { count: e.count.value, unit: e.unit } }
      }
      case 'case': {
        const operand = e.operand ? sub(e.operand) : null
        const parts: Compiled[] = operand ? [operand] : []
        let sql = `CASE${operand ? ` ${operand.sql}` : ''}`
        let type: ValueType = 'Null'
        for (const w of e.whens) {
          const when = sub(w.when)
          const then = sub(w.then)
          parts.push(when, then)
          if (type === 'Null') type = then.type
          sql += ` WHEN ${when.sql} THEN ${then.sql}`
        }
        if (e.otherwise) {
          const otherwise = sub(e.otherwise)
          parts.push(otherwise)
          if (type === 'Null') type = otherwise.type
          sql += ` ELSE ${otherwise.sql}`
        }
        return combine(parts, `(${sql} END)`, type)
      }
      case 'call': {
        const name = e.name
        if (isAggregate(name)) {
          if (inAggregate) throw new QueryError(`Aggregate function ${name}() inside another aggregate function`)
          if (clause === 'where' || clause === 'group') throw new QueryError(`Aggregate function ${name}() is not allowed in ${clause === 'where' ? 'WHERE' : 'GROUP BY'}`)
        }
        if (canonicalName(name) === 'arrayJoin') return this.arrayJoin(e, level, clause, inAggregate)
        return compileCall(this, e, (x, w, acceptArray) => this.expr(x, level, clause, w, inAggregate || isAggregate(name), acceptArray))
      }
    }
  }

  private name(parts: string[], level: Level, clause: string, want: Want): Compiled {
    let column = parts[0]
    if (parts.length === 2) {
      if (!level.sourceNames.has(parts[0])) throw new QueryError(`Unknown table ${parts[0]} in ${parts.join('.')}`)
      column = parts[1]
    } else if (parts.length > 2) {
      throw new QueryError(`Unknown column ${parts.join('.')}`)
    } else if (level.aliases.has(column)) {
      if (!level.expanding.has(column)) return this.expandAlias(column, level, clause, want)
      this.shadowed++
    }
    if (level.events) {
      const type = EVENT_COLUMNS[column]
      if (!type) {
        if (column === 'team_id') throw new QueryError('Unknown column team_id: the project is the one in the path')
        throw new QueryError(`Unknown column ${column}`)
      }
      if (column === 'person_id') {
        level.usesPerson = true
        return { sql: level.events.personId(), type, agg: false, loose: column }
      }
      return { sql: level.events.column(column), type, agg: false, loose: column }
    }
    const out = level.outputs!.get(column)
    if (!out) throw new QueryError(`Unknown column ${column} (the subquery has ${[...level.outputs!.keys()].join(', ')})`)
    return { sql: out.sql, type: out.type, agg: false, loose: column, ...(out.array ? { array: out.array } : {}) }
  }

  /**
   * arrayJoin(array): one row for each element, as ClickHouse's. Every arrayJoin() of a level must unroll the same
   * array (two would multiply each other's rows); each use reads the same element (ClickHouse: the same expression,
   * which it evaluates once; the embedded stores: the element's column beside the row, dialect.ts arrayJoinSource).
   */
  private arrayJoin(e: Extract<Expr, { k: 'call' }>, level: Level, clause: string, inAggregate: boolean): Compiled {
    if (e.params) throw new QueryError('arrayJoin() takes no parameters')
    if (e.distinct || e.star || e.args.length !== 1) throw new QueryError(`arrayJoin() takes 1 argument, an array${e.args.length === 1 ? '' : `, not ${e.args.length}`}`)
    const a = this.expr(e.args[0], level, clause, 'string', inAggregate, true)
    if (!a.array) throw new QueryError('arrayJoin() takes an array (splitByChar(), groupArray() or quantiles() in a subquery, or a subquery column holding one)')
    if (a.agg) throw new QueryError('arrayJoin() of an aggregate in the same SELECT is not supported: aggregate in a subquery, then arrayJoin() its column')
    if (level.arrayJoin && level.arrayJoin.array !== a.sql) {
      throw new QueryError('Only one array may be unrolled by arrayJoin() in a SELECT (two would multiply each other\'s rows): unroll the other in a subquery')
    }
    level.arrayJoin ??= { array: a.sql, element: arrayJoinElement(this.dialect, a.sql, level.id, level.events !== null) }
    return { sql: level.arrayJoin.element, type: a.array, agg: false, loose: 'arrayJoin()' }
  }

  private property(table: string | null, path: string[], level: Level, flavor: PropertyFlavor): Compiled {
    if (table !== null && !level.sourceNames.has(table)) throw new QueryError(`Unknown table ${table} in ${table}.properties`)
    let source: string
    if (level.events) source = level.events.column('properties')
    else {
      const out = level.outputs!.get('properties')
      if (!out) throw new QueryError('Unknown column properties: the subquery does not select it')
      source = out.sql
    }
    if (path.length === 0) return { sql: source, type: 'String', agg: false, loose: 'properties' }
    const type: ValueType = flavor === 'raw' ? 'JSON' : flavor === 'number' ? 'Float' : 'String'
    return { sql: propertySql(this.dialect, this.params, source, path, flavor), type, agg: false, loose: `properties.${path.join('.')}` }
  }

  /** The left side of a comparison, typed by what it is compared with (a property compared with a number is a number). */
  private comparable(e: Expr, other: Compiled, level: Level, clause: string, inAggregate: boolean, numeric: boolean): Compiled {
    if (e.k === 'property') {
      if (numeric) return this.expr(e, level, clause, 'number', inAggregate)
      if (other.type === 'Bool') return this.expr(e, level, clause, 'raw', inAggregate)
    }
    return this.expr(e, level, clause, 'any', inAggregate)
  }

  /** The SQL of `value` as compared with `to`: a string literal compared with a time is that time. */
  coerceTo(to: Compiled, value: Compiled): string {
    if ((to.type === 'DateTime' || to.type === 'Date') && value.literal !== undefined) {
      return timeLiteral(this.dialect, parseTimeLiteral(value.literal), to.type)
    }
    if (to.type === 'JSON' && value.type === 'Bool') return this.params.string(value.sql === '1' ? 'true' : 'false')
    if (to.type === 'DateTime' && value.type === 'Date') return this.dateToDateTime(value.sql)
    return value.sql
  }

  dateToDateTime(sql: string): string {
    return isEmbedded(this.dialect) ? sql : `toDateTime(toUInt32(${sql}) * 86400, 'UTC')`
  }

  /**
   * `a AND b AND c …` (or OR): parsed as a tree as deep as the chain is long, so walked in a loop, never by
   * recursion, and written as a balanced tree so that the store's own parser nests log2(n) levels, not n (SQLite
   * refuses 1000, a current ClickHouse less).
   */
  private logical(e: Extract<Expr, { k: 'binary' }>, level: Level, clause: string, inAggregate: boolean): Compiled {
    const operands: Expr[] = []
    let at: Expr = e
    while (at.k === 'binary' && at.op === e.op) {
      operands.push(at.right)
      at = at.left
    }
    operands.push(at)
    operands.reverse()
    const parts = operands.map((x) => this.expr(x, level, clause, 'any', inAggregate))
    const texts = parts.map((p) => p.sql)
    fitsStatement(texts)
    return combine(parts, balanced(texts, ` ${e.op} `), 'Bool')
  }

  private binary(op: string, left: Expr, right: Expr, level: Level, clause: string, inAggregate: boolean): Compiled {
    const sub = (x: Expr, w: Want = 'any') => this.expr(x, level, clause, w, inAggregate)
    if (['=', '!=', '<', '<=', '>', '>='].includes(op)) {
      // type each side by the other: a property against a number is compared as a number
      const probeR = right.k === 'property' ? null : sub(right)
      const l = this.comparable(left, probeR ?? ({ type: 'String' } as Compiled), level, clause, inAggregate, probeR?.type === 'Int' || probeR?.type === 'Float')
      const r = probeR ?? this.comparable(right, l, level, clause, inAggregate, l.type === 'Int' || l.type === 'Float')
      let ls = l.sql
      let rs = this.coerceTo(l, r)
      if (l.literal !== undefined && (r.type === 'DateTime' || r.type === 'Date')) ls = this.coerceTo(r, l)
      if (l.type === 'Date' && r.type === 'DateTime') ls = this.dateToDateTime(ls)
      return combine([l, r], `(${ls} ${op} ${rs})`, 'Bool')
    }
    const l = sub(left, 'number')
    const r = sub(right, 'number')
    const lTime = l.type === 'DateTime' || l.type === 'Date'
    if ((op === '+' || op === '-') && (lTime || l.literal !== undefined) && r.interval) {
      const base = lTime ? l : { ...l, type: 'DateTime' as ValueType, time: parseTimeLiteral(l.literal!) }
      return this.shiftTime(base, op === '-' ? -r.interval.count : r.interval.count, r.interval.unit)
    }
    if (op === '+' && l.interval && (r.type === 'DateTime' || r.type === 'Date')) return this.shiftTime(r, l.interval.count, l.interval.unit)
    if (l.interval || r.interval) throw new QueryError('INTERVAL can only be added to or subtracted from a date or time')
    if (lTime || r.type === 'DateTime' || r.type === 'Date') throw new QueryError(`Operator ${op} does not apply to dates and times (use INTERVAL or dateDiff)`)
    const type: ValueType = op !== '/' && l.type === 'Int' && r.type === 'Int' ? 'Int' : 'Float'
    if (op === '/' && this.dialect === 'sqlite') return combine([l, r], `(CAST(${l.sql} AS REAL) / ${r.sql})`, 'Float')
    if (this.dialect === 'duckdb') {
      // DuckDB's / divides as floats already; its booleans take no arithmetic: counted as 0 and 1, as elsewhere
      const n = (c: Compiled) => (c.type === 'Bool' ? `CAST(${c.sql} AS INTEGER)` : c.sql)
      return combine([l, r], `(${n(l)} ${op} ${n(r)})`, type)
    }
    return combine([l, r], `(${l.sql} ${op} ${r.sql})`, type)
  }

  /** time ± n units: folded when the time is a constant, else the store's arithmetic. */
  shiftTime(base: Compiled, count: number, unit: string): Compiled {
    const type = base.type as TimeType
    if (base.time !== undefined) {
      const ms = shift(base.time, count, unit)
      return { sql: timeLiteral(this.dialect, ms, type), type, agg: false, loose: null, time: ms }
    }
    if (this.dialect === 'duckdb') {
      // DuckDB's month arithmetic clamps the day to the month's last, as ClickHouse's addMonths
      if (unit === 'MONTH') return { ...base, sql: `epoch_ms(epoch_ms(${base.sql}) + INTERVAL (${count}) MONTH)` }
      return { ...base, sql: `(${base.sql} + ${count * UNIT_MS[unit]})` }
    }
    if (this.dialect === 'sqlite') {
      if (unit === 'MONTH') {
        return { ...base, sql: `(CAST(strftime('%s', ${base.sql} / 1000, 'unixepoch', '${count >= 0 ? '+' : ''}${count} months') AS INTEGER) * 1000 + ${base.sql} % 1000)` }
      }
      return { ...base, sql: `(${base.sql} + ${count * UNIT_MS[unit]})` }
    }
    const fn = { SECOND: 'addSeconds', MINUTE: 'addMinutes', HOUR: 'addHours', DAY: 'addDays', WEEK: 'addWeeks', MONTH: 'addMonths' }[unit]
    return { ...base, sql: `${fn}(${base.sql}, ${count})` }
  }

  private like(e: Extract<Expr, { k: 'like' }>, level: Level, clause: string, inAggregate: boolean): Compiled {
    if (e.pattern.k !== 'string') throw new QueryError(`${e.caseInsensitive ? 'ILIKE' : 'LIKE'} takes a string literal pattern`)
    const a = this.expr(e.arg, level, clause, 'string', inAggregate)
    const pattern = e.caseInsensitive ? asciiLower(e.pattern.value) : e.pattern.value
    const subject = e.caseInsensitive ? asciiCase(this.dialect, a.sql, 'lower') : a.sql
    const not = e.not ? 'NOT ' : ''
    if (this.dialect === 'duckdb') {
      // not GLOB or LIKE: DuckDB's backtrack, and one call past the time limit is not interrupted (likeToRegex)
      return { ...a, sql: `(${not}regexp_full_match(${subject}, ${this.params.string(likeToRegex(pattern))}, 's'))`, type: 'Bool' }
    }
    if (isEmbedded(this.dialect)) {
      // GLOB is case-sensitive like ClickHouse's LIKE (SQLite's LIKE is not)
      return { ...a, sql: `(${not}(${subject} GLOB ${this.params.string(likeToGlob(pattern))}))`, type: 'Bool' }
    }
    return { ...a, sql: `(${not}like(${subject}, ${this.params.string(pattern)}))`, type: 'Bool' }
  }
}

/** How a refusal names an expression that gives an array. */
function arrayName(e: Expr): string {
  if (e.k === 'call') return `${e.name}()`
  if (e.k === 'name') return e.parts.join('.')
  return 'The expression'
}

export function combine(parts: Compiled[], sql: string, type: ValueType): Compiled {
  return { sql, type, agg: parts.some((p) => p.agg), loose: parts.find((p) => p.loose)?.loose ?? null }
}

export function compileQuery(query: Select, target: Target): CompiledQuery {
  return new Compiler(target).compileQuery(query)
}
