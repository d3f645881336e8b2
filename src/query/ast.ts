// The syntax tree of the HogQL subset (DESIGN.md "Query API").

export type Expr =
  | { k: 'number'; value: number; text: string }
  | { k: 'string'; value: string }
  | { k: 'bool'; value: boolean }
  | { k: 'null' }
  /** a name, maybe qualified (`e.event`); resolved by the compiler */
  | { k: 'name'; parts: string[]; at: number }
  /** `properties.a.b` / `properties['a']`: the property path after `properties` */
  | { k: 'property'; table: string | null; path: string[]; at: number }
  | { k: 'unary'; op: '-' | 'NOT'; arg: Expr }
  | { k: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  /** `params`: a parametric call's first list (`quantile(0.9)(x)`: params [0.9], args [x]); absent when not one */
  | { k: 'call'; name: string; args: Expr[]; distinct: boolean; star: boolean; at: number; params?: Expr[] }
  | { k: 'in'; arg: Expr; list: Expr[]; not: boolean }
  | { k: 'between'; arg: Expr; low: Expr; high: Expr; not: boolean }
  | { k: 'like'; arg: Expr; pattern: Expr; not: boolean; caseInsensitive: boolean }
  | { k: 'isNull'; arg: Expr; not: boolean }
  | { k: 'interval'; count: Expr; unit: IntervalUnit }
  | { k: 'case'; operand: Expr | null; whens: { when: Expr; then: Expr }[]; otherwise: Expr | null }

export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '=' | '!=' | '<' | '<=' | '>' | '>=' | 'AND' | 'OR'
export type IntervalUnit = 'SECOND' | 'MINUTE' | 'HOUR' | 'DAY' | 'WEEK' | 'MONTH'

export interface SelectColumn {
  expr: Expr
  alias: string | null
  /** the expression as written: the column's name when it has no alias */
  text: string
}

export type Source = { k: 'events'; alias: string | null } | { k: 'subquery'; query: Select; alias: string | null }

export interface Select {
  distinct: boolean
  columns: SelectColumn[]
  from: Source
  where: Expr | null
  groupBy: Expr[]
  having: Expr | null
  orderBy: { expr: Expr; desc: boolean }[]
  limit: number | null
  offset: number | null
}
