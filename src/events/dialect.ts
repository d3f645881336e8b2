// What differs between ClickHouse versions, in one place: column types, value formatting, insert settings.
// Debian's 18.16 (the only one installable on the build machines) lacks DateTime64, codecs, LowCardinality
// by default and insert deduplication tokens; production runs 23.8 or newer.

export interface Dialect {
  readonly name: 'modern' | 'legacy'
  readonly version: string
  /** timestamps are stored to this precision (ms) */
  readonly timestampPrecisionMs: number
  /** supports insert_deduplication_token (22.2+) */
  readonly dedupToken: boolean
  /** a JSONEachRow value for a DateTime column */
  formatDateTime(ms: number): string
  /** for whole milliseconds, the same text as ASCII bytes at `at` (room for 32 needed); returns where it ends */
  writeDateTime(ms: number, out: Uint8Array, at: number): number
  /** a SQL literal of the column's type */
  dateTimeLiteral(ms: number): string
  /** a DateTime value as ClickHouse prints it, back to epoch ms */
  parseDateTime(text: string): number
  /** the variables migrations are rendered with */
  templateVars(): Record<string, string>
}

export interface Version {
  major: number
  minor: number
}

export function parseVersion(text: string): Version {
  const m = /^(\d+)\.(\d+)/.exec(text.trim())
  if (!m) throw new Error(`unrecognised ClickHouse version "${text}"`)
  return { major: Number(m[1]), minor: Number(m[2]) }
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => pad(i))
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => pad(i, 3))
const DAY_MS = 86_400_000
// The flush formats three times per row: the day's "YYYY-MM-DD " is kept for the last day seen (a batch's
// events mostly share a few days), the time of day is arithmetic on small lookup tables.
let lastDay = Number.NaN
let lastDayText = ''
let lastDayBytes = new Uint8Array(0)

function dayStart(ms: number): number {
  const day = Math.floor(ms / DAY_MS)
  if (day !== lastDay) {
    const d = new Date(day * DAY_MS)
    lastDayText = `${d.getUTCFullYear()}-${TWO_DIGITS[d.getUTCMonth() + 1]}-${TWO_DIGITS[d.getUTCDate()]} `
    lastDayBytes = Buffer.from(lastDayText, 'latin1')
    lastDay = day
  }
  return day * DAY_MS
}

function formatUtc(ms: number, fraction: boolean): string {
  const inDay = ms - dayStart(ms)
  const seconds = Math.floor(inDay / 1000)
  const base = `${lastDayText}${TWO_DIGITS[Math.floor(seconds / 3600)]}:${TWO_DIGITS[Math.floor(seconds / 60) % 60]}:${TWO_DIGITS[seconds % 60]}`
  return fraction ? `${base}.${THREE_DIGITS[inDay % 1000]}000` : base
}

/** ASCII codes of 00..99, two a number. */
const DIGIT_PAIRS = new Uint8Array(200)
for (let i = 0; i < 100; i++) DIGIT_PAIRS.set([48 + Math.floor(i / 10), 48 + (i % 10)], i * 2)

/** formatUtc's text as bytes, for whole milliseconds (the insert body is written so: no string made per value). */
function writeUtc(ms: number, fraction: boolean, out: Uint8Array, at: number): number {
  const inDay = ms - dayStart(ms)
  out.set(lastDayBytes, at)
  at += lastDayBytes.length
  const seconds = Math.floor(inDay / 1000)
  at = writePair(out, at, Math.floor(seconds / 3600))
  out[at++] = 58 // :
  at = writePair(out, at, Math.floor(seconds / 60) % 60)
  out[at++] = 58
  at = writePair(out, at, seconds % 60)
  if (!fraction) return at
  const millis = inDay % 1000
  out[at++] = 46 // .
  out[at++] = 48 + Math.floor(millis / 100)
  at = writePair(out, at, millis % 100)
  out[at++] = 48
  out[at++] = 48
  out[at++] = 48
  return at
}

function writePair(out: Uint8Array, at: number, n: number): number {
  out[at] = DIGIT_PAIRS[n * 2]
  out[at + 1] = DIGIT_PAIRS[n * 2 + 1]
  return at + 2
}

// DateTime (legacy) holds 1970-01-01 .. 2106-02-07; DateTime64 holds 1900 .. 2299.
const LEGACY_MIN = 1000 // the zero DateTime reads back as 0000-00-00
const LEGACY_MAX = 4294967295_000
const MODERN_MIN = Date.UTC(1900, 0, 1)
const MODERN_MAX = Date.UTC(2299, 11, 31, 23, 59, 59, 999)
const clamp = (ms: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, ms))

export function parseClickHouseDateTime(text: string): number {
  // "YYYY-MM-DD hh:mm:ss[.ffffff]" in UTC
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?/.exec(text)
  if (!m) return Number.NaN
  const millis = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0
  if (m[1] === '0000') return 0 // the zero DateTime (18.16) of rows stored before times were clamped
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], millis)
}

/** A ClickHouse string literal; backslash, quote and NUL escaped, so user text cannot leave the literal. */
export function stringLiteral(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\0/g, '\\0')}'`
}

export function dialectFor(versionText: string, database: string, cluster?: string): Dialect {
  const v = parseVersion(versionText)
  const modern = v.major >= 20
  const dedupToken = v.major > 22 || (v.major === 22 && v.minor >= 2)
  const onCluster = cluster ? `ON CLUSTER ${cluster}` : ''

  // In a cluster a table is replicated within its shard, or, for the migration state, across the whole cluster
  // (one ZooKeeper path for every node, each node a replica named by its shard and replica), so that a node of any
  // shard knows what was applied.
  const engine = (kind: 'ReplacingMergeTree' | 'MergeTree', table: string, scope: 'shard' | 'cluster', version?: string) => {
    const args = version ? [version] : []
    if (!cluster) return `${kind}(${args.join(', ')})`
    const [path, replica] =
      scope === 'shard'
        ? [`'/clickhouse/tables/{shard}/${database}.${table}'`, `'{replica}'`]
        : [`'/clickhouse/tables/all/${database}.${table}'`, `'{shard}-{replica}'`]
    return `Replicated${kind}(${[path, replica, ...args].join(', ')})`
  }

  const vars: Record<string, string> = {
    database,
    cluster: cluster ?? '',
    on_cluster: onCluster,
    events_storage: cluster ? 'events_local' : 'events',
    datetime: modern ? `DateTime64(6, 'UTC')` : `DateTime('UTC')`,
    now: modern ? 'now64(6)' : 'now()',
    low_cardinality_string: modern ? 'LowCardinality(String)' : 'String',
    zstd: modern ? 'CODEC(ZSTD(3))' : '',
    // 18.16's cityHash64 does not take a UUID
    uuid_hash: modern ? 'cityHash64(uuid)' : 'cityHash64(toString(uuid))',
    table_settings: !cluster && dedupToken ? 'SETTINGS non_replicated_deduplication_window = 1000' : '',
    'ReplacingMergeTree(events, _inserted_at)': engine('ReplacingMergeTree', cluster ? 'events_local' : 'events', 'shard', '_inserted_at'),
    'MergeTree(schema_migrations)': engine('MergeTree', 'schema_migrations', 'cluster'),
    // the person mapping is small next to the events: every node holds all of it (a local join on every shard)
    'ReplacingMergeTree(person_distinct_id, version)': engine('ReplacingMergeTree', 'person_distinct_id', 'cluster', 'version'),
    // session recordings (src/replay/): sharded by session, like the events by distinct id
    session_replay_storage: cluster ? 'session_replay_blocks_local' : 'session_replay_blocks',
    'ReplacingMergeTree(session_replay_blocks, _inserted_at)': engine('ReplacingMergeTree', cluster ? 'session_replay_blocks_local' : 'session_replay_blocks', 'shard', '_inserted_at'),
  }

  return {
    name: modern ? 'modern' : 'legacy',
    version: versionText,
    timestampPrecisionMs: modern ? 1 : 1000,
    dedupToken,
    formatDateTime: (ms) =>
      modern ? formatUtc(clamp(ms, MODERN_MIN, MODERN_MAX), true) : formatUtc(clamp(ms, LEGACY_MIN, LEGACY_MAX), false),
    writeDateTime: (ms, out, at) =>
      modern ? writeUtc(clamp(ms, MODERN_MIN, MODERN_MAX), true, out, at) : writeUtc(clamp(ms, LEGACY_MIN, LEGACY_MAX), false, out, at),
    dateTimeLiteral: (ms) =>
      modern
        ? `toDateTime64(${stringLiteral(formatUtc(clamp(ms, MODERN_MIN, MODERN_MAX), true))}, 6, 'UTC')`
        : `toDateTime(${stringLiteral(formatUtc(clamp(ms, LEGACY_MIN, LEGACY_MAX), false))}, 'UTC')`,
    parseDateTime: parseClickHouseDateTime,
    templateVars: () => ({ ...vars }),
  }
}

/**
 * Render a migration file: fill {{variables}}, split into statements, keep those whose "-- when:" mode
 * matches. Unknown variables are an error, so a typo cannot reach the server.
 */
export function renderMigration(text: string, vars: Record<string, string>, clustered: boolean): string[] {
  const statements: string[] = []
  for (const chunk of text.split(/;\s*(?:\n|$)/)) {
    const when = /^\s*--\s*when:\s*(cluster|single)\s*$/m.exec(chunk)?.[1]
    if (when === 'cluster' && !clustered) continue
    if (when === 'single' && clustered) continue
    const body = chunk
      .split('\n')
      .filter((line) => !/^\s*--/.test(line))
      .join('\n')
      .trim()
    if (!body) continue
    statements.push(
      body.replace(/\{\{([^}]+)\}\}/g, (_, name: string) => {
        const value = vars[name.trim()]
        if (value === undefined) throw new Error(`migration uses unknown variable {{${name}}}`)
        return value
      }),
    )
  }
  return statements
}
