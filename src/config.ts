// The environment, as one TypeBox schema, read once at boot. Nothing else reads process.env.
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

const MiB = 1024 * 1024

const Int = (opts: { default: number; minimum?: number; maximum?: number; description: string }) =>
  Type.Integer(opts)
const Bool = (def: boolean, description: string) => Type.Boolean({ default: def, description })
const OptionalString = (description: string, pattern?: string) =>
  Type.Optional(Type.String({ minLength: 1, description, ...(pattern ? { pattern } : {}) }))

export const ConfigSchema = Type.Object({
  PORT: Int({ default: 8000, minimum: 0, maximum: 65535, description: 'TCP port to listen on' }),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1, description: 'address to listen on' }),
  DATA_DIR: Type.String({ default: './data', minLength: 1, description: 'embedded stores, write-ahead log, dead letters' }),
  DATABASE_URL: OptionalString('postgres:// URL; unset means the embedded Postgres (PGlite)', '^postgres(ql)?://'),
  CLICKHOUSE_URL: OptionalString('http(s)://user:pass@host:8123/database; unset means the embedded event store', '^https?://'),
  // Passwords apart from the URLs, as compose and secret stores hand them over: any character works (no URL-encoding
  // by hand); taken as they are, spaces included, and written into the URL encoded (see withPassword below).
  DATABASE_PASSWORD: OptionalString("password for DATABASE_URL's user, any characters; replaces a password in the URL"),
  CLICKHOUSE_PASSWORD: OptionalString("password for CLICKHOUSE_URL's user, any characters; replaces a password in the URL"),
  CLICKHOUSE_CLUSTER: OptionalString('cluster name: create Replicated tables ON CLUSTER and write through a Distributed table', '^[A-Za-z0-9_]+$'),
  INIT_PROJECT_API_KEY: OptionalString('project API key of the default project created at boot', '^phc_[A-Za-z0-9_-]{8,96}$'),
  INIT_PERSONAL_API_KEY: OptionalString('personal API key of the admin user created at boot', '^phx_[A-Za-z0-9_-]{8,96}$'),
  INIT_ADMIN_EMAIL: OptionalString('email of the admin user, applied once at boot with INIT_ADMIN_PASSWORD (the console’s first sign-in)', '^[^@\\s]+@[^@\\s]+$'),
  INIT_ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 8, maxLength: 1024, description: 'password of INIT_ADMIN_EMAIL (at least 8 characters), applied once at boot' })),
  MAX_BODY_BYTES: Int({ default: 20 * MiB, minimum: 1024, description: 'request body cap in bytes (decompressed bodies too)' }),
  MAX_RECORDING_BODY_BYTES: Int({
    default: 25 * MiB,
    minimum: 1024,
    description: 'session recordings (/s/): body cap in bytes, and the cap on what a body decodes to (a gzip bomb costs this once); 413 past it',
  }),
  ERROR_TRACKING_MAX_ISSUES: Int({
    default: 5000,
    minimum: 0,
    description: "error tracking: issues per project; past it a new fingerprint makes no issue (its events are stored and fingerprinted; counted in error_tracking_issues_total{outcome=refused_max_issues})",
  }),
  RECORDING_MAX_SESSION_BYTES: Int({
    default: 256 * MiB,
    minimum: 0,
    description: "session recordings (/s/): a session's total bytes of decoded JSON; past it its requests are answered 200 with quota_limited and dropped (counted in recording_bytes_refused_total); 0 = no cap",
  }),
  RECORDING_MAX_PROJECT_DAILY_BYTES: Int({
    default: 10 * 1024 * MiB,
    minimum: 0,
    description: "session recordings (/s/): a project's bytes of decoded JSON per UTC day; past it its requests are answered 200 with quota_limited and dropped (counted in recording_bytes_refused_total); 0 = no cap",
  }),
  RECORDING_RETENTION_DAYS: Int({ default: 30, minimum: 1, maximum: 3650, description: "session recordings are deleted this many days after they end (a project's session_recording_retention_days wins)" }),
  MAX_INFLIGHT_BODY_BYTES: Int({
    default: 256 * MiB,
    minimum: 1024,
    description: 'request-body bytes the whole process may be receiving at once (one address: a quarter of it); past it 503 with Retry-After',
  }),
  FLUSH_INTERVAL_MS: Int({ default: 1000, minimum: 5, description: 'flush the event buffer at least this often' }),
  LOG_REQUESTS: Bool(false, 'one info line per request: method, route, status, duration, request id'),
  BOOT_WAIT_MS: Int({ default: 60_000, minimum: 0, description: 'how long boot retries an unreachable Postgres (DATABASE_URL) before giving up' }),
  CONSUMER_STALL_MS: Int({
    default: 60_000,
    minimum: 100,
    description: '/_ready answers 503 while a consumer of the log (store writer, learner) has had work this long without finishing any',
  }),
  OUTAGE_LOG_INTERVAL_MS: Int({
    default: 60_000,
    minimum: 100,
    description: 'while a store is failing, how often the log summarises the outage (attempts, backlog, age of the oldest record)',
  }),
  FLUSH_MAX_EVENTS: Int({ default: 20_000, minimum: 1, description: 'flush as soon as this many events are buffered; also the largest insert' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info', description: 'one of fatal, error, warn, info, debug, trace, silent' },
  ),
  WAL_FSYNC_INTERVAL_MS: Int({
    default: 50,
    minimum: 0,
    description: 'fdatasync the write-ahead log this often; 0 = before every acknowledgement (group commit)',
  }),
  WAL_MAX_BYTES: Int({ default: 2048 * MiB, minimum: MiB, description: 'unflushed log size past which capture answers 503' }),
  MAX_EVENT_DEFINITIONS: Int({
    default: 10_000,
    minimum: 0,
    description: 'event definitions a project may have; past it its events are still stored but no new definition is made',
  }),
  MAX_PROPERTY_DEFINITIONS: Int({
    default: 10_000,
    minimum: 0,
    description: 'property definitions of each type (event, person, group) a project may have; past it no new one is made',
  }),
  WAL_PROJECT_SHARE: Type.Number({
    default: 0.25,
    exclusiveMinimum: 0,
    maximum: 1,
    description: "the fraction of WAL_MAX_BYTES one project's unflushed requests may hold; past it that project's capture answers 429",
  }),
  WAL_SEGMENT_BYTES: Int({ default: 64 * MiB, minimum: 64 * 1024, description: 'size at which the log rolls to a new segment file' }),
  CAPTURE_REFUSED_DECODE_BYTES_PER_SECOND: Int({
    default: 8 * MiB,
    minimum: 0,
    description: 'capture: decoded bytes of refused bodies (unknown key, bad data) per client address per second; past it the address gets 429 before decoding; 0 = unlimited',
  }),
  BODY_TIMEOUT_MS: Int({
    default: 30_000,
    minimum: 100,
    description: 'capture and /decide: the whole request body must arrive within this long, else 408 and the connection is closed',
  }),
  HISTORY_HOLD_MS: Int({
    default: 10_000,
    minimum: 0,
    description: 'ClickHouse: how long events of other months are held, to be written grouped by month, before they are inserted',
  }),
  RING_MAX_EVENTS: Int({ default: 200_000, minimum: 1, description: 'events held decoded in memory; beyond it the flusher reads them back from the log' }),
  TRUST_PROXY: Bool(false, 'behind proxies you control: the client IP is the X-Forwarded-For entry your outermost proxy appended'),
  TRUST_PROXY_HOPS: Int({ default: 1, minimum: 1, maximum: 10, description: 'with TRUST_PROXY: how many proxies you control append to X-Forwarded-For (the client IP is that many entries from the end)' }),
  EMBEDDED_PG_FSYNC: Bool(
    true,
    'the embedded Postgres (no DATABASE_URL): a commit waits until it is on the disk; false is faster but an OS crash or power cut can lose the last writes',
  ),
  EMBEDDED_EVENT_STORE: Type.Union([Type.Literal('sqlite'), Type.Literal('duckdb')], {
    default: 'duckdb',
    description: 'the embedded event store (no CLICKHOUSE_URL): sqlite (DATA_DIR/events.sqlite) or duckdb (DATA_DIR/events.duckdb, columnar: analytical queries many times faster)',
  }),
  EMBEDDED_DUCKDB_MEMORY_MB: Int({ default: 128, minimum: 64, description: 'EMBEDDED_EVENT_STORE=duckdb: memory_limit of the embedded DuckDB (MiB); larger sorts and joins spill to DATA_DIR/events.duckdb.tmp' }),
  EMBEDDED_DUCKDB_SPILL_MB: Int({ default: 4096, minimum: 0, description: 'EMBEDDED_EVENT_STORE=duckdb: what the embedded DuckDB may spill to DATA_DIR/events.duckdb.tmp (MiB); a statement needing more is refused' }),
  EMBEDDED_DUCKDB_THREADS: Int({ default: 2, minimum: 1, maximum: 64, description: 'EMBEDDED_EVENT_STORE=duckdb: threads the embedded DuckDB computes on' }),
  EMBEDDED_DUCKDB_BUSY_WAIT_MS: Int({
    default: 5000,
    minimum: 0,
    description: 'EMBEDDED_EVENT_STORE=duckdb: a query that ran short of memory beside others is run again alone; the longest wait for that turn (and of the queries held behind it) before 503 store_busy with Retry-After',
  }),
  PG_POOL_MAX: Int({ default: 10, minimum: 1, maximum: 200, description: 'Postgres connections per process' }),
  QUERY_TIMEOUT_MS: Int({ default: 30_000, minimum: 100, description: 'longest query API statement; a longer one is cancelled in the store (504 query_timeout)' }),
  QUERY_MAX_RESULT_BYTES: Int({
    default: 64 * 1024 * 1024,
    minimum: 64 * 1024,
    description: 'largest query API answer, as read from the store; rows past it are not read (hasMore: true), a first row past it is 413 query_result_too_large',
  }),
  INSIGHTS_CACHE_TTL_MS: Int({ default: 60_000, minimum: 0, description: 'how long a query API answer may be served again from the cache (refresh "force_blocking" computes it anew); 0: no cache' }),
  INSIGHTS_CACHE_MAX_BYTES: Int({ default: 64 * 1024 * 1024, minimum: 0, description: 'memory for cached query API answers; an answer over an eighth of it is not kept' }),
  INSIGHTS_FUNNEL_MAX_EVENTS: Int({ default: 2_000_000, minimum: 1, description: 'events one funnel insight may read (its steps and exclusions in the range; every event for a strict funnel); past it the query is refused (400 too_many_events)' }),
  QUERY_MAX_MEMORY: Int({
    default: 1024 * 1024 * 1024,
    minimum: 16 * 1024 * 1024,
    description: 'ClickHouse: max_memory_usage of each query API statement; a query that needs more is refused (400) and the server keeps its memory',
  }),
  EXPERIMENT_MAX_EXPOSED_PERSONS: Int({
    default: 200_000,
    minimum: 1,
    description: 'experiment results: the most exposed persons with metric events one result joins one by one (exposed persons are counted in the store whatever their number); past it, a uniform sample of persons by id (sampling_rate in the answer), never refused',
  }),
  EXPERIMENT_MAX_METRIC_ROWS: Int({
    default: 1_000_000,
    minimum: 1,
    description: "experiment results: the most metric events in the experiment's window one result reads; past it, a uniform sample of persons by id (sampling_rate in the answer), never refused",
  }),
  SURVEYS_MAX_PER_PROJECT: Int({ default: 500, minimum: 1, description: 'surveys: the most a project may have (archived ones included); a create past it is refused 400' }),
  SURVEY_MAX_QUESTIONS: Int({ default: 50, minimum: 1, maximum: 1000, description: 'surveys: the most questions one survey may ask; more is refused 400' }),
  SURVEY_MAX_CHOICES: Int({ default: 100, minimum: 2, maximum: 10_000, description: 'surveys: the most choices one single or multiple choice question may offer; more is refused 400' }),
  SURVEY_MAX_BYTES: Int({ default: 65_536, minimum: 1024, maximum: 1_048_576, description: "surveys: the most bytes a survey's questions, conditions and appearance may take as JSON; more is refused 400" }),
  SURVEY_CACHE_MAX_BYTES: Int({ default: 33_554_432, minimum: 65_536, description: 'surveys: bytes of the public /api/surveys/ answers kept in memory (per process, least recently used dropped first)' }),
  PG_STATEMENT_TIMEOUT_MS: Int({ default: 10_000, minimum: 0, description: 'requests: Postgres cancels a statement running longer (0 = no limit)' }),
  LEARNER_STATEMENT_TIMEOUT_MS: Int({ default: 120_000, minimum: 0, description: 'the learner (persons, definitions): Postgres cancels a statement running longer (0 = no limit)' }),
  FLAG_REFRESH_INTERVAL_MS: Int({ default: 500, minimum: 50, description: 'how often each process checks Postgres for changed flags' }),
  SHUTDOWN_TIMEOUT_MS: Int({ default: 15_000, minimum: 100, description: 'longest graceful drain before exit' }),
  SHUTDOWN_GRACE_MS: Int({
    default: 0,
    minimum: 0,
    description: 'after SIGTERM, keep serving this long while /_ready answers 503, so a load balancer stops sending first',
  }),
  RATE_LIMIT_API_PER_MINUTE: Int({ default: 2400, minimum: 0, description: 'private API requests per user (all of its personal keys together) per minute; 0 = unlimited' }),
  UNKNOWN_KEY_LOOKUPS_PER_MINUTE: Int({ default: 60, minimum: 0, description: 'lookups of unknown personal keys per client address per minute, then 429; 0 = unlimited' }),
  LOGIN_ATTEMPTS_PER_EMAIL: Int({ default: 10, minimum: 1, maximum: 10_000, description: 'sign-in password checks per email in 15 minutes (counted before the check, shared by every process on the Postgres), then 429 throttled' }),
  LOGIN_ATTEMPTS_PER_ADDRESS: Int({ default: 50, minimum: 0, maximum: 100_000, description: 'sign-in password checks per client address in 15 minutes, whatever the email, then 429 throttled; 0 = no per-address limit' }),
  PERSON_CACHE_MAX_BYTES: Int({
    default: 32 * 1024 * 1024,
    minimum: 0,
    description: 'memory for the stored person and group properties /decide reads (0 = no cache: every read goes to Postgres)',
  }),
  FLAG_HASH_MEMO_BYTES: Int({
    default: 16 * 1024 * 1024,
    minimum: 0,
    description: 'memory for rollout and variant hashes kept across /decide requests of returning users (0 = hash every time)',
  }),
  PERSON_CACHE_TTL_MS: Int({
    default: 60_000,
    minimum: 100,
    description: 'longest a cached person is served without a change notice re-reading it (a safety net; changes are pushed)',
  }),
  KEY_CHANGE_CHECK_MS: Int({ default: 1000, minimum: 50, description: 'how often each process checks for reset project tokens (NOTIFY on real Postgres is faster)' }),
  RATE_LIMIT_DECIDE_PER_SECOND: Int({ default: 0, minimum: 0, description: '/decide and /flags requests per project token per second; 0 = unlimited' }),
  REUSE_PORT: Bool(false, 'set SO_REUSEPORT so several processes can share PORT'),
  FLUSH_WORKER_NICE: Int({
    default: 10,
    minimum: 0,
    maximum: 19,
    description: 'scheduling niceness of the flush worker thread: under saturation, accepting requests comes first',
  }),
  ANALYTICS_THREADS: Int({
    default: 1,
    minimum: 1,
    maximum: 16,
    description: 'threads that run the private API’s analytics (query API, insights, dashboards, experiment results, the events API), each with its own store connections; the thread serving capture and /decide never does',
  }),
  ANALYTICS_THREAD_NICE: Int({
    default: 5,
    minimum: 0,
    maximum: 19,
    description: 'scheduling niceness of the analytics threads: under saturation, capture and /decide come first',
  }),
  ANALYTICS_MAX_ANSWER_BYTES: Int({
    default: 128 * MiB,
    minimum: 64 * 1024,
    description: 'largest encoded answer of an analytics request (413 answer_too_large past it); rows past QUERY_MAX_RESULT_BYTES are not even read',
  }),
  ANALYTICS_QUEUE_PER_THREAD: Int({
    default: 32,
    minimum: 1,
    description: 'analytics requests waiting or running on one thread at most; past it 503 analytics_busy with Retry-After',
  }),
})

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`)
  }
}

function describeExpected(schema: TSchema): string {
  if (schema.description) {
    const bounds = [
      schema.minimum !== undefined ? `>= ${schema.minimum}` : '',
      schema.exclusiveMinimum !== undefined ? `> ${schema.exclusiveMinimum}` : '',
      schema.maximum !== undefined ? `<= ${schema.maximum}` : '',
      schema.pattern ? `matching ${schema.pattern}` : '',
    ].filter(Boolean)
    const kind = schema.type === 'integer' ? 'an integer' : schema.type === 'number' ? 'a number' : schema.type === 'boolean' ? 'true or false' : 'a string'
    return `${kind}${bounds.length ? ` ${bounds.join(' and ')}` : ''} (${schema.description})`
  }
  return 'a valid value'
}

/** Values taken exactly as given (a password may begin or end with a space). */
const VERBATIM = new Set(['DATABASE_PASSWORD', 'CLICKHOUSE_PASSWORD'])

/** The URL with this password, percent-encoded so that `@`, `/`, `:`, `%`, `#` … survive parsing. */
export function withPassword(url: string, password: string): string {
  const u = new URL(url)
  u.password = encodeURIComponent(password)
  return u.toString()
}

/** Parse the environment; throws ConfigError naming every bad variable and what it expected. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value !== '') raw[key] = VERBATIM.has(key) ? value : value.trim()
  }
  const candidate = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw))
  const problems: string[] = []
  for (const error of Value.Errors(ConfigSchema, candidate)) {
    const key = error.path.replace(/^\//, '').split('/')[0]
    if (problems.some((p) => p.startsWith(`${key}:`))) continue
    const schema = (ConfigSchema.properties as Record<string, TSchema>)[key]
    const expected = schema ? describeExpected(schema) : 'a valid value'
    // a password is never echoed, even a wrong one
    const got = /PASSWORD/.test(key) ? `a value of ${String(raw[key] ?? '').length} characters` : JSON.stringify(raw[key])
    problems.push(`${key}: got ${got}, expected ${expected}`)
  }
  if (Boolean(raw.INIT_ADMIN_EMAIL) !== Boolean(raw.INIT_ADMIN_PASSWORD)) {
    problems.push('INIT_ADMIN_EMAIL and INIT_ADMIN_PASSWORD: set both or neither')
  }
  if (problems.length > 0) throw new ConfigError(problems)
  const config = candidate as Config
  if (config.DATABASE_PASSWORD !== undefined) {
    if (!config.DATABASE_URL) throw new ConfigError(['DATABASE_PASSWORD: set, but DATABASE_URL is not: the password needs the URL it belongs to'])
    config.DATABASE_URL = withPassword(config.DATABASE_URL, config.DATABASE_PASSWORD)
  }
  if (config.CLICKHOUSE_PASSWORD !== undefined) {
    if (!config.CLICKHOUSE_URL) throw new ConfigError(['CLICKHOUSE_PASSWORD: set, but CLICKHOUSE_URL is not: the password needs the URL it belongs to'])
    config.CLICKHOUSE_URL = withPassword(config.CLICKHOUSE_URL, config.CLICKHOUSE_PASSWORD)
  }
  return config
}

/** A config for tests and tools: defaults plus overrides, validated the same way. */
export function configWith(overrides: Partial<Record<keyof Config, string | number | boolean>>): Config {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) env[k] = String(v)
  return loadConfig(env)
}
