// Why a query is refused: the message names what was refused (and, for syntax, where).
export class QueryError extends Error {}

/** The limit a query went past, for the metric that counts refusals (docs/query.md "Limits"). */
export type QueryLimit = 'text' | 'tokens' | 'depth' | 'subqueries' | 'columns' | 'in_list' | 'work' | 'statement'

/** A query refused because it goes past one of the limits on its size or complexity (400, like any QueryError). */
export class QueryLimitError extends QueryError {
  constructor(
    message: string,
    readonly limit: QueryLimit,
  ) {
    super(message)
  }
}

/** Parsing and compiling did not end within the query's time budget (answered as a query past its time). */
export class QueryDeadlineError extends Error {}

/** Throws once `performance.now()` is past `deadline` (undefined: no deadline). */
export function checkDeadline(deadline: number | undefined): void {
  if (deadline !== undefined && performance.now() > deadline) {
    throw new QueryDeadlineError('The query took longer than its time budget to compile')
  }
}
