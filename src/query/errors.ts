// Why a query is refused: the message names what was refused (and, for syntax, where).
export class QueryError extends Error {}
