// What a ClickHouse error means for the rows that met it: their fault (dead-lettered), or the store's (retried).
import { StoreError } from './store'

// Server error codes that are about the rows themselves: retrying cannot help, dead-letter them.
// Everything else (network, timeouts, too many parts, memory, missing table…) is retried.
const ROW_ERROR_CODES = new Set([
  '6', // CANNOT_PARSE_TEXT
  '26', // CANNOT_PARSE_QUOTED_STRING
  '27', // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  '38', // CANNOT_PARSE_DATE
  '41', // CANNOT_PARSE_DATETIME
  '53', // TYPE_MISMATCH
  '69', // ARGUMENT_OUT_OF_BOUND
  '70', // CANNOT_CONVERT_TYPE
  '72', // CANNOT_PARSE_NUMBER
  '117', // INCORRECT_DATA
  '131', // TOO_LARGE_STRING_SIZE
  '349', // CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN
  '376', // CANNOT_PARSE_UUID
  '395', // FUNCTION_THROW_IF_VALUE_IS_NON_ZERO
  '469', // VIOLATED_CONSTRAINT
])

/**
 * A batch spanning more than max_partitions_per_insert_block months (100 on current servers: a historical
 * import) is refused whole. It is the batch's fault, not the store's: the consumer splits it (pipeline/isolate.ts)
 * until each insert spans fewer months, and everything lands. Code 252 also means "too many parts", which passes.
 */
const TOO_MANY_PARTITIONS = /too many partitions for (a )?single insert block/i

/** The server's error code ('' when there is none). */
export function errorCode(error: unknown): string {
  const message = (error as Error)?.message ?? String(error)
  // 18.16 words its errors "Code: 395, e.displayText() = …", which the client does not parse into a code.
  return String((error as { code?: string | number })?.code ?? /^Code: (\d+)/.exec(message)?.[1] ?? '')
}

export const UNKNOWN_TABLE = '60'
export const UNKNOWN_DATABASE = '81'

/** Whether an error is the rows' fault (kept as it is) or the store's (retried); exported for its tests. */
export function classify(error: unknown, what: string): StoreError {
  if (error instanceof StoreError) return error
  const message = (error as Error)?.message ?? String(error)
  const code = errorCode(error)
  const rowsAtFault = ROW_ERROR_CODES.has(code) || (code === '252' && TOO_MANY_PARTITIONS.test(message))
  return new StoreError(`clickhouse ${what}: ${message}`, !rowsAtFault, error)
}
