// Structured JSON logs on stderr (stdout belongs to the CLI's result).
import pino, { type Logger } from 'pino'

export type { Logger }

// A key must never reach a log line; redact the usual carriers and scrub anything key-shaped in messages.
const REDACT = [
  'authorization',
  'api_key',
  'token',
  'personal_api_key',
  'key',
  '*.authorization',
  '*.api_key',
  '*.token',
  '*.personal_api_key',
  'req.headers.authorization',
]

const KEY_SHAPE = /\bph[cxs]_[A-Za-z0-9_-]{4,}/g
const redactKey = (key: string): string => `${key.slice(0, 4)}…redacted`

// A key written with escapes is still the key: `phx\u005f…` in raw JSON, `phx%5F…` in a path or query (twice
// escaped too, `\\u005f` or `%255F`). A run of key characters and escapes is decoded before it is matched.
const ESCAPED_RUN = /(?:[A-Za-z0-9_-]|\\{1,8}u[0-9a-fA-F]{4}|%(?:25){0,4}[0-9a-fA-F]{2})+/g
const ESCAPE = /\\{1,8}u([0-9a-fA-F]{4})|%(?:25){0,4}([0-9a-fA-F]{2})/g

function scrubEscapedKeys(text: string): string {
  return text.replace(ESCAPED_RUN, (run) => {
    if (!run.includes('\\') && !run.includes('%')) return run
    const decoded = run.replace(ESCAPE, (_, u: string | undefined, pct: string | undefined) => String.fromCharCode(parseInt(u ?? pct!, 16)))
    const scrubbed = decoded.replace(KEY_SHAPE, redactKey)
    return scrubbed === decoded ? run : scrubbed
  })
}

const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi

/** Keys (plain or escaped) and URL credentials out of a text (a connection string in an error message carries a password). */
export function scrubKeys(text: string): string {
  let out = text.includes('ph') ? text.replace(KEY_SHAPE, redactKey) : text
  if (out.includes('\\') || out.includes('%')) out = scrubEscapedKeys(out)
  if (out.includes('://')) out = out.replace(URL_CREDENTIALS, '$1[redacted]@')
  return out
}

// What database and network errors carry besides their message: Postgres (code, detail, hint …), sockets
// (errno, syscall, address, port) and our own (transient, status).
const ERROR_FIELDS = ['code', 'detail', 'hint', 'severity', 'position', 'where', 'schema', 'table', 'column', 'constraint', 'routine', 'errno', 'syscall', 'address', 'port', 'path', 'status', 'transient', 'reason']

/**
 * An error as plain fields: type, message, stack, what its kind carries, and its cause chain. (Error fields are
 * not enumerable: a generic copy of the log line turned every error into `{}`.)
 */
export function errorFields(e: Error, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = { type: e.constructor?.name ?? e.name, message: e.message, stack: e.stack }
  const fields = e as unknown as Record<string, unknown>
  for (const k of ERROR_FIELDS) {
    const v = fields[k]
    // (Bun sets a numeric column/line on every error: a source position, not Postgres's column name)
    if (v !== undefined && v !== null && typeof v !== 'object' && typeof v !== 'function' && !(k === 'column' && typeof v === 'number')) out[k] = v
  }
  if (e.cause !== undefined) out.cause = e.cause instanceof Error && depth < 4 ? errorFields(e.cause, depth + 1) : String(e.cause)
  if (e instanceof AggregateError && depth < 4) out.errors = e.errors.slice(0, 5).map((x) => (x instanceof Error ? errorFields(x, depth + 1) : String(x)))
  return out
}

/**
 * Every string of a log line, nested ones and field names included (paths, URLs and names taken from a request
 * carry keys too). What lies deeper than the scrubber looks is left out rather than written unread.
 */
function scrubFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubKeys(value)
  if (value instanceof Error) return scrubFields(errorFields(value), depth)
  if (typeof value !== 'object' || value === null) return value
  if (depth > 6) return '[nested too deep]'
  if (Array.isArray(value)) return value.map((v) => scrubFields(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) out[scrubKeys(k)] = scrubFields(v, depth + 1)
  return out
}

export function createLogger(level: string, destination: pino.DestinationStream | number = 2): Logger {
  const dest = typeof destination === 'number' ? pino.destination({ fd: destination, sync: false }) : destination
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => scrubFields(object) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = scrubKeys(args[i] as string)
          return method.apply(this, args as Parameters<typeof method>)
        },
      },
      serializers: {
        err: (e: unknown) => (e instanceof Error ? errorFields(e) : e),
      },
    },
    dest,
  )
}

/**
 * At most one line per key per interval: an outage must not repeat the same warning several times a second.
 * The next line that gets through says how many were held back.
 */
export function throttled(intervalMs: number): (key: string, write: (suppressed: number) => void) => void {
  const last = new Map<string, { at: number; suppressed: number }>()
  return (key, write) => {
    const now = Date.now()
    const entry = last.get(key)
    if (entry && now - entry.at < intervalMs) {
      entry.suppressed++
      return
    }
    if (last.size > 1000) last.clear() // keys are a handful of routes and reasons; never let them grow
    last.set(key, { at: now, suppressed: 0 })
    write(entry?.suppressed ?? 0)
  }
}

/** A logger that writes nothing, for unit tests. */
export const silentLogger: Logger = pino({ level: 'silent' })

/**
 * Exit once what was logged has reached stderr. The destination (sonic-boom) writes asynchronously, one write in
 * flight at a time: a fixed pause before process.exit lost the last line ("stopped", or why a boot failed) on a busy
 * machine, and its flush(cb) answers at once when no minimum length is set. So: wait (at most 2 s) until no write
 * is in flight, then write what is queued synchronously, then exit.
 */
export function exitAfterFlush(log: Logger, code: number): void {
  const stream = (log as unknown as Record<symbol, { _writing?: boolean; flushSync?(): void } | undefined>)[pino.symbols.streamSym]
  const deadline = Date.now() + 2000
  const attempt = (): void => {
    if (stream?._writing === true && Date.now() < deadline) {
      setTimeout(attempt, 2)
      return
    }
    try {
      stream?.flushSync?.()
    } catch {
      // destroyed or not ready: nothing more can be written
    }
    process.exit(code)
  }
  attempt()
}
