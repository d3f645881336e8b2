// A recursive-descent parser (Pratt for expressions) for exactly the grammar of DESIGN.md "Query API".
// Recursion is bounded (nesting depth, subquery depth, token count), so hostile text gets a 400, never a stack
// overflow; every error names what was refused and where. Chains of operators (`1+1+…`, `a AND b AND …`) are read
// in a loop, not by recursion; the compiler bounds the depth of the tree they make (budget.ts).
import type { BinaryOp, Expr, IntervalUnit, Select, SelectColumn, Source } from './ast'
import { checkDeadline, QueryError, QueryLimitError, type QueryLimit } from './errors'
import { tokenize, type Token } from './lexer'

export const LIMITS = {
  /** bytes of query text (the compiled statement has a budget of its own: budget.ts) */
  maxQueryBytes: 256 * 1024,
  maxTokens: 30_000,
  /**
   * nested expressions (parentheses, operators, function arguments; the compiler applies it to the tree too): a
   * current ClickHouse refuses about 150 nested parenthesised operators (max_parser_depth), and each level may
   * compile to a few
   */
  maxDepth: 64,
  /** FROM (SELECT … FROM (SELECT …)) */
  maxSubqueryDepth: 4,
  /** terms of one IN (…) list */
  maxInList: 10_000,
  maxColumns: 200,
} as const

const RESERVED = new Set(
  [
    'SELECT', 'FROM', 'WHERE', 'GROUP', 'BY', 'HAVING', 'ORDER', 'LIMIT', 'OFFSET', 'AS', 'AND', 'OR', 'NOT', 'IN',
    'BETWEEN', 'LIKE', 'ILIKE', 'IS', 'NULL', 'CASE', 'WHEN', 'THEN', 'ELSE', 'END', 'DISTINCT', 'ASC', 'DESC',
    'INTERVAL', 'TRUE', 'FALSE', 'UNION', 'SETTINGS', 'FORMAT', 'INTO', 'JOIN', 'INNER', 'LEFT', 'RIGHT', 'FULL',
    'CROSS', 'ARRAY', 'GLOBAL', 'ANY', 'ALL', 'USING', 'ON', 'WITH', 'PREWHERE', 'SAMPLE', 'FINAL', 'WINDOW', 'OVER',
  ].map((k) => k.toUpperCase()),
)
const INTERVAL_UNITS = new Set<IntervalUnit>(['SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH'])
// binding powers: higher binds tighter
const BP = { OR: 10, AND: 20, NOT: 30, COMPARE: 40, ADD: 50, MUL: 60, UNARY: 70 }

/** `deadline`: a `performance.now()` past which parsing stops (QueryDeadlineError). */
export function parseQuery(text: string, options: { deadline?: number } = {}): Select {
  if (Buffer.byteLength(text, 'utf8') > LIMITS.maxQueryBytes) {
    throw new QueryLimitError(`The query text is larger than ${LIMITS.maxQueryBytes} bytes`, 'text')
  }
  return new Parser(text, tokenize(text, LIMITS.maxTokens, options.deadline), options.deadline).parseStatement()
}

/** One expression as an insight's member gives it: the expression, its text as written, an alias, a direction. */
export interface ParsedExpression {
  expr: Expr
  /** from its first token to its last (comments around it left out) */
  text: string
  alias: string | null
  desc: boolean | null
}

/**
 * Exactly one expression (EventsQuery's `select`, `where`, `orderBy` members), optionally with `AS alias`
 * (`alias`) or `ASC|DESC` (`order`); anything after it (a second expression, FROM, a statement) is refused.
 */
export function parseExpression(text: string, options: { alias?: boolean; order?: boolean; deadline?: number } = {}): ParsedExpression {
  if (Buffer.byteLength(text, 'utf8') > LIMITS.maxQueryBytes) {
    throw new QueryLimitError(`The expression is larger than ${LIMITS.maxQueryBytes} bytes`, 'text')
  }
  return new Parser(text, tokenize(text, LIMITS.maxTokens, options.deadline), options.deadline).parseLoneExpression(options)
}

class Parser {
  private pos = 0
  private depth = 0
  private subqueryDepth = 0
  private steps = 0

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
    private readonly deadline: number | undefined,
  ) {}

  private get token(): Token {
    return this.tokens[this.pos]
  }

  private fail(message: string, token: Token = this.token): never {
    throw new QueryError(`${message} at line ${token.line}, column ${token.column}`)
  }

  private refuse(message: string, limit: QueryLimit, token: Token = this.token): never {
    throw new QueryLimitError(`${message} at line ${token.line}, column ${token.column}`, limit)
  }

  private describe(token: Token): string {
    if (token.kind === 'eof') return 'the end of the query'
    if (token.kind === 'string') return 'a string'
    return `"${token.text}"`
  }

  private isKeyword(word: string, token: Token = this.token): boolean {
    return token.kind === 'ident' && token.text.toUpperCase() === word
  }

  private acceptKeyword(word: string): boolean {
    if (!this.isKeyword(word)) return false
    this.pos++
    return true
  }

  private expectKeyword(word: string): void {
    if (!this.acceptKeyword(word)) this.fail(`Expected ${word} but found ${this.describe(this.token)}`)
  }

  private isOp(op: string, token: Token = this.token): boolean {
    return token.kind === 'op' && token.text === op
  }

  private acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false
    this.pos++
    return true
  }

  private expectOp(op: string): void {
    if (!this.acceptOp(op)) this.fail(`Expected "${op}" but found ${this.describe(this.token)}`)
  }

  parseStatement(): Select {
    if (this.isKeyword('WITH')) this.fail('WITH is not supported')
    const select = this.parseSelect()
    // one statement; a single trailing semicolon is allowed
    if (this.isOp(';')) {
      this.pos++
      if (this.token.kind !== 'eof') this.fail('A second statement is not allowed')
    }
    if (this.token.kind !== 'eof') this.refuseTrailing()
    return select
  }

  parseLoneExpression(options: { alias?: boolean; order?: boolean }): ParsedExpression {
    if (this.token.kind === 'eof') this.fail('Expected an expression')
    const start = this.token.offset
    const expr = this.parseExpr(0)
    const text = this.text.slice(start, this.tokens[this.pos - 1].end).trim()
    const alias = options.alias && this.acceptKeyword('AS') ? this.parseIdentifier('an alias') : null
    const desc = options.order ? (this.acceptKeyword('DESC') ? true : this.acceptKeyword('ASC') ? false : null) : null
    if (this.pos < this.tokens.length - 1) this.fail(`Expected one expression, found ${this.describe(this.token)} after it`)
    return { expr, text, alias, desc }
  }

  private refuseTrailing(): never {
    const t = this.token
    const word = t.kind === 'ident' ? t.text.toUpperCase() : ''
    if (word === 'SETTINGS') this.fail('SETTINGS is not allowed')
    if (word === 'FORMAT') this.fail('FORMAT is not allowed')
    if (word === 'INTO') this.fail('INTO OUTFILE is not allowed')
    if (word === 'UNION') this.fail('UNION is not supported')
    if (['JOIN', 'INNER', 'LEFT', 'RIGHT', 'FULL', 'CROSS', 'ARRAY', 'GLOBAL', 'ANY', 'ALL'].includes(word)) this.fail('JOIN is not supported')
    if (['PREWHERE', 'SAMPLE', 'FINAL', 'WINDOW'].includes(word)) this.fail(`${word} is not supported`)
    if (this.isOp(',')) this.fail('Only one table may be read (FROM events or FROM (subquery))')
    this.fail(`Unexpected ${this.describe(t)}`)
  }

  private parseSelect(): Select {
    this.expectKeyword('SELECT')
    const distinct = this.acceptKeyword('DISTINCT')
    const columns: SelectColumn[] = []
    do {
      if (columns.length >= LIMITS.maxColumns) this.refuse(`More than ${LIMITS.maxColumns} columns`, 'columns')
      if (this.isOp('*')) this.fail('SELECT * is not supported: name the columns')
      const start = this.token.offset
      const expr = this.parseExpr(0)
      const end = this.tokens[this.pos - 1].end
      columns.push({ expr, alias: this.parseAlias(), text: this.text.slice(start, end).trim() })
    } while (this.acceptOp(','))
    if (!this.isKeyword('FROM')) this.fail(`Expected FROM but found ${this.describe(this.token)}`)
    this.pos++
    const from = this.parseSource()
    const where = this.acceptKeyword('WHERE') ? this.parseExpr(0) : null
    if (this.isKeyword('PREWHERE')) this.fail('PREWHERE is not supported')
    const groupBy: Expr[] = []
    if (this.acceptKeyword('GROUP')) {
      this.expectKeyword('BY')
      do groupBy.push(this.parseExpr(0))
      while (this.acceptOp(','))
    }
    const having = this.acceptKeyword('HAVING') ? this.parseExpr(0) : null
    const orderBy: Select['orderBy'] = []
    if (this.acceptKeyword('ORDER')) {
      this.expectKeyword('BY')
      do {
        const expr = this.parseExpr(0)
        const desc = this.acceptKeyword('DESC') ? true : (this.acceptKeyword('ASC'), false)
        orderBy.push({ expr, desc })
      } while (this.acceptOp(','))
    }
    let limit: number | null = null
    let offset: number | null = null
    if (this.acceptKeyword('LIMIT')) {
      limit = this.parseCount('LIMIT')
      // LIMIT offset, count (ClickHouse and SQLite both read it so)
      if (this.acceptOp(',')) {
        offset = limit
        limit = this.parseCount('LIMIT')
      }
    }
    if (this.acceptKeyword('OFFSET')) {
      if (offset !== null) this.fail('OFFSET given twice')
      offset = this.parseCount('OFFSET')
    }
    return { distinct, columns, from, where, groupBy, having, orderBy, limit, offset }
  }

  private parseCount(what: string): number {
    const t = this.token
    if (t.kind !== 'number' || !/^\d+$/.test(t.text)) this.fail(`${what} takes a whole number`)
    const n = Number(t.text)
    if (!Number.isSafeInteger(n)) this.fail(`${what} is too large`)
    this.pos++
    return n
  }

  private parseAlias(): string | null {
    if (this.acceptKeyword('AS')) return this.parseIdentifier('an alias')
    const t = this.token
    if ((t.kind === 'ident' && !RESERVED.has(t.text.toUpperCase())) || t.kind === 'quoted') return this.parseIdentifier('an alias')
    return null
  }

  private parseIdentifier(what: string): string {
    const t = this.token
    if (t.kind === 'quoted' || (t.kind === 'ident' && !RESERVED.has(t.text.toUpperCase()))) {
      if (t.text === '' || /[\0-\x1f`"\\]/.test(t.text) || t.text.length > 128) this.fail(`Invalid ${what}`)
      this.pos++
      return t.text
    }
    this.fail(`Expected ${what} but found ${this.describe(t)}`)
  }

  private parseSource(): Source {
    if (this.acceptOp('(')) {
      if (!this.isKeyword('SELECT')) this.fail('Expected a subquery (SELECT …)')
      if (++this.subqueryDepth > LIMITS.maxSubqueryDepth) this.refuse(`Subqueries are nested deeper than ${LIMITS.maxSubqueryDepth}`, 'subqueries')
      const query = this.parseSelect()
      this.subqueryDepth--
      this.expectOp(')')
      return { k: 'subquery', query, alias: this.parseAlias() }
    }
    const t = this.token
    if (t.kind !== 'ident' && t.kind !== 'quoted') this.fail(`Expected a table but found ${this.describe(t)}`)
    let name = t.text
    this.pos++
    while (this.isOp('.')) {
      this.pos++
      name += `.${this.token.text}`
      this.pos++
    }
    if (this.isOp('(')) this.fail(`Table function ${name}() is not allowed`, t)
    if (name !== 'events') this.fail(`Table ${name} is not allowed (only events can be read)`, t)
    return { k: 'events', alias: this.parseAlias() }
  }

  /** An expression whose operators bind tighter than `minBp`. */
  private parseExpr(minBp: number): Expr {
    if (++this.depth > LIMITS.maxDepth) this.refuse(`The query nests expressions deeper than ${LIMITS.maxDepth} levels`, 'depth')
    let left = this.parsePrefix()
    for (;;) {
      const t = this.token
      const word = t.kind === 'ident' ? t.text.toUpperCase() : ''
      if (word === 'OR' && minBp < BP.OR) {
        this.pos++
        left = { k: 'binary', op: 'OR', left, right: this.parseExpr(BP.OR) }
      } else if (word === 'AND' && minBp < BP.AND) {
        this.pos++
        left = { k: 'binary', op: 'AND', left, right: this.parseExpr(BP.AND) }
      } else if (minBp < BP.COMPARE && this.isComparison()) {
        left = this.parseComparison(left)
      } else if (t.kind === 'op' && (t.text === '+' || t.text === '-') && minBp < BP.ADD) {
        this.pos++
        left = { k: 'binary', op: t.text, left, right: this.parseExpr(BP.ADD) }
      } else if (t.kind === 'op' && (t.text === '*' || t.text === '/' || t.text === '%') && minBp < BP.MUL) {
        this.pos++
        left = { k: 'binary', op: t.text as BinaryOp, left, right: this.parseExpr(BP.MUL) }
      } else {
        break
      }
    }
    this.depth--
    return left
  }

  private isComparison(): boolean {
    const t = this.token
    if (t.kind === 'op') return ['=', '==', '!=', '<>', '<', '<=', '>', '>='].includes(t.text)
    if (t.kind !== 'ident') return false
    const word = t.text.toUpperCase()
    if (['IN', 'BETWEEN', 'LIKE', 'ILIKE', 'IS'].includes(word)) return true
    if (word === 'NOT') {
      const next = this.tokens[this.pos + 1]
      return next.kind === 'ident' && ['IN', 'BETWEEN', 'LIKE', 'ILIKE'].includes(next.text.toUpperCase())
    }
    return word === 'GLOBAL'
  }

  private parseComparison(left: Expr): Expr {
    const t = this.token
    if (t.kind === 'op') {
      this.pos++
      const op = (t.text === '==' ? '=' : t.text === '<>' ? '!=' : t.text) as BinaryOp
      return { k: 'binary', op, left, right: this.parseExpr(BP.COMPARE) }
    }
    if (this.acceptKeyword('GLOBAL')) this.fail('GLOBAL IN is not supported', t)
    if (this.acceptKeyword('IS')) {
      const not = this.acceptKeyword('NOT')
      this.expectKeyword('NULL')
      return { k: 'isNull', arg: left, not }
    }
    const not = this.acceptKeyword('NOT')
    if (this.acceptKeyword('IN')) {
      this.expectOp('(')
      if (this.isKeyword('SELECT')) this.fail('IN (subquery) is not supported')
      const list: Expr[] = []
      if (!this.isOp(')')) {
        do {
          if (list.length >= LIMITS.maxInList) this.refuse(`An IN list holds more than ${LIMITS.maxInList} terms`, 'in_list')
          list.push(this.parseExpr(0))
        } while (this.acceptOp(','))
      }
      this.expectOp(')')
      if (list.length === 0) this.fail('An IN list needs at least one term')
      return { k: 'in', arg: left, list, not }
    }
    if (this.acceptKeyword('BETWEEN')) {
      const low = this.parseExpr(BP.COMPARE)
      this.expectKeyword('AND')
      const high = this.parseExpr(BP.COMPARE)
      return { k: 'between', arg: left, low, high, not }
    }
    const caseInsensitive = this.isKeyword('ILIKE')
    if (this.acceptKeyword('LIKE') || this.acceptKeyword('ILIKE')) {
      return { k: 'like', arg: left, pattern: this.parseExpr(BP.COMPARE), not, caseInsensitive }
    }
    this.fail(`Unexpected ${this.describe(this.token)}`)
  }

  private parsePrefix(): Expr {
    if ((++this.steps & 1023) === 0) checkDeadline(this.deadline)
    const t = this.token
    if (t.kind === 'number') {
      this.pos++
      const value = Number(t.text)
      if (!Number.isFinite(value)) this.fail('Number out of range', t)
      return { k: 'number', value, text: t.text }
    }
    if (t.kind === 'string') {
      this.pos++
      return { k: 'string', value: t.text }
    }
    if (t.kind === 'op') {
      if (t.text === '(') {
        this.pos++
        if (this.isKeyword('SELECT')) this.fail('Subqueries are only allowed in FROM')
        const inner = this.parseExpr(0)
        this.expectOp(')')
        return inner
      }
      if (t.text === '-') {
        this.pos++
        return { k: 'unary', op: '-', arg: this.parseExpr(BP.UNARY) }
      }
      if (t.text === '+') {
        this.pos++
        return this.parseExpr(BP.UNARY)
      }
      this.fail(`Unexpected ${this.describe(t)}`)
    }
    if (t.kind === 'eof') this.fail('Unexpected end of the query')
    const word = t.kind === 'ident' ? t.text.toUpperCase() : ''
    if (word === 'NOT') {
      this.pos++
      return { k: 'unary', op: 'NOT', arg: this.parseExpr(BP.NOT) }
    }
    if (word === 'NULL') return this.pos++, { k: 'null' }
    if (word === 'TRUE' || word === 'FALSE') return this.pos++, { k: 'bool', value: word === 'TRUE' }
    if (word === 'CASE') return this.parseCase()
    if (word === 'INTERVAL') return this.parseInterval()
    if (t.kind === 'ident' && RESERVED.has(word) && word !== 'ANY') this.fail(`Unexpected ${word}`)
    return this.parseNameOrCall()
  }

  private parseCase(): Expr {
    this.pos++
    const operand = this.isKeyword('WHEN') ? null : this.parseExpr(0)
    const whens: { when: Expr; then: Expr }[] = []
    while (this.acceptKeyword('WHEN')) {
      const when = this.parseExpr(0)
      this.expectKeyword('THEN')
      whens.push({ when, then: this.parseExpr(0) })
    }
    if (whens.length === 0) this.fail('CASE needs at least one WHEN')
    const otherwise = this.acceptKeyword('ELSE') ? this.parseExpr(0) : null
    this.expectKeyword('END')
    return { k: 'case', operand, whens, otherwise }
  }

  private parseInterval(): Expr {
    this.pos++
    let count: Expr
    const t = this.token
    if (t.kind === 'string') {
      // INTERVAL '1 day'
      const m = /^\s*(\d+)\s+([A-Za-z]+?)s?\s*$/.exec(t.text)
      const unit = m?.[2].toUpperCase() as IntervalUnit
      if (!m || !INTERVAL_UNITS.has(unit)) this.fail('Unknown interval', t)
      this.pos++
      return { k: 'interval', count: { k: 'number', value: Number(m[1]), text: m[1] }, unit }
    }
    count = this.parseExpr(BP.UNARY)
    const u = this.token
    const unit = (u.kind === 'ident' ? u.text.toUpperCase().replace(/S$/, '') : '') as IntervalUnit
    if (!INTERVAL_UNITS.has(unit)) this.fail('Expected an interval unit (SECOND, MINUTE, HOUR, DAY, WEEK or MONTH)', u)
    this.pos++
    return { k: 'interval', count, unit }
  }

  private parseNameOrCall(): Expr {
    const first = this.token
    const parts = [this.parseNamePart()]
    if (this.isOp('(') && first.kind === 'ident') return this.parseCall(first)
    while (this.isOp('.')) {
      this.pos++
      parts.push(this.parseNamePart())
    }
    const lower = parts.map((p) => p.toLowerCase())
    const propertiesAt = lower[0] === 'properties' ? 0 : parts.length > 1 && lower[1] === 'properties' ? 1 : -1
    if (propertiesAt < 0) {
      if (this.isOp('[')) this.fail('Subscripts are only allowed on properties')
      if (this.isOp('(')) this.fail(`Function ${parts.join('.')}() is not allowed`, first)
      return { k: 'name', parts, at: first.offset }
    }
    const path = parts.slice(propertiesAt + 1)
    while (this.acceptOp('[')) {
      const key = this.token
      if (key.kind !== 'string' && key.kind !== 'number') this.fail('A property subscript takes a string', key)
      this.pos++
      path.push(key.text)
      this.expectOp(']')
      while (this.isOp('.')) {
        this.pos++
        path.push(this.parseNamePart())
      }
    }
    if (path.length > 16) this.fail('A property path is deeper than 16 keys', first)
    return { k: 'property', table: propertiesAt === 1 ? parts[0] : null, path, at: first.offset }
  }

  private parseNamePart(): string {
    const t = this.token
    if (t.kind !== 'ident' && t.kind !== 'quoted' && t.kind !== 'number') this.fail(`Expected a name but found ${this.describe(t)}`)
    this.pos++
    return t.text
  }

  private parseCall(nameToken: Token): Expr {
    const first = this.parseArguments(nameToken)
    // a parametric call, name(parameters)(arguments): ClickHouse's form for quantile(0.9)(x), groupArray(10)(x)
    if (!this.isOp('(')) return { k: 'call', name: nameToken.text, ...first, at: nameToken.offset }
    if (first.distinct || first.star) this.fail(`The parameters of ${nameToken.text}()() cannot hold ${first.star ? '*' : 'DISTINCT'}`, nameToken)
    const second = this.parseArguments(nameToken)
    if (this.isOp('(')) this.fail(`${nameToken.text}()()() has more than one list of parameters`, nameToken)
    return { k: 'call', name: nameToken.text, ...second, params: first.args, at: nameToken.offset }
  }

  /** One parenthesised list of a call: arguments, `*`, or DISTINCT and arguments. */
  private parseArguments(nameToken: Token): { args: Expr[]; distinct: boolean; star: boolean } {
    this.expectOp('(')
    if (++this.depth > LIMITS.maxDepth) this.refuse(`The query nests expressions deeper than ${LIMITS.maxDepth} levels`, 'depth')
    const distinct = this.acceptKeyword('DISTINCT')
    let star = false
    const args: Expr[] = []
    if (this.isOp('*')) {
      this.pos++
      star = true
    } else if (!this.isOp(')')) {
      do {
        if (args.length >= 100) this.fail(`A function takes at most 100 arguments (${nameToken.text}())`)
        args.push(this.parseExpr(0))
      } while (this.acceptOp(','))
    }
    this.expectOp(')')
    this.depth--
    return { args, distinct, star }
  }
}
