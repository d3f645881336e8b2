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

export function scrubKeys(text: string): string {
  return text.replace(KEY_SHAPE, (k) => `${k.slice(0, 4)}…redacted`)
}

/** Every string field of a log line, nested ones included (paths and URLs carry keys too). */
function scrubFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.includes('ph') ? scrubKeys(value) : value
  if (depth > 4 || typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map((v) => scrubFields(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) out[k] = scrubFields(v, depth + 1)
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
        err: (e: unknown) => {
          const s = pino.stdSerializers.err(e as Error)
          if (s && typeof s.message === 'string') s.message = scrubKeys(s.message)
          if (s && typeof s.stack === 'string') s.stack = scrubKeys(s.stack)
          return s
        },
      },
    },
    dest,
  )
}

/** A logger that writes nothing, for unit tests. */
export const silentLogger: Logger = pino({ level: 'silent' })
