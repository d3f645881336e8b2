// The composition root: opens the stores, runs migrations and bootstrap, and wires the capabilities.
// main.ts, the CLI and the tests all build the service through here.
import type { Config } from './config'
import { migratePostgres } from './db/migrate'
import { refuseUnfinishedMove } from './move/marker'
import { lockDataDir } from './db/data-dir-lock'
import { isConnectionError, openDatabase, type Database } from './db/postgres'
import { createEventStore, duckDbFile, duckDbSettings, sqliteFile } from './events/factory'
import { startSqliteImport } from './events/sqlite-import'
import { accessDuckDb } from './events/duckdb-access'
import { valueWithin } from './lib/timeout'
import { parseClickHouseUrl } from './events/clickhouse-target'
import { ResilientStore } from './events/resilient-store'
import type { EventStore } from './events/store'
import { PersonalKeyAuth } from './projects/auth'
import { RateLimiter } from './http/rate-limit'
import type { Logger } from './log'
import { createMetrics, type Metrics } from './ops/metrics'
import { waitForPostgres } from './ops/boot'
import type { Readiness } from './ops/routes'
import { bootstrap } from './projects/repository'
import { KeyChangeWatcher } from './projects/key-changes'
import { ProjectTokenCache } from './projects/token-cache'
import { DecodeBudget } from './capture/decode-budget'
import { CaptureService } from './capture/service'
import { CaptureLog } from './pipeline/capture-log'
import { startFlags, type Flags } from './flags'
import type { PersonChange } from './people/person-cache'
import { LEARNER } from './people/learner'
import { notifyPersonChange } from './people/person-changes'
import { CohortService } from './cohorts/service'
import { experimentBudgets, ExperimentsService } from './experiments/service'
import { PublicSurveyList } from './surveys/public-list'
import { SurveysService } from './surveys/service'
import { ActionService } from './actions/service'
import { PersonErasure } from './people/erasure'
import { listenPersonChanges } from './people/person-changes'
import { STORE_WRITER } from './pipeline/store-writer'
import { RECORDING_WRITER } from './replay/writer'
import { ERRORS_CONSUMER } from './error-tracking/consumer'
import { RecordingIngest } from './replay/ingest'
import { RecordingBudget } from './replay/budget'
import { createRecordingStore } from './replay/factory'
import { HISTORY_WRITER, historyApart } from './pipeline/history-writer'
import { applyInitAdmin, UserService } from './users/service'
import { SessionCookieResolver } from './users/session-cookie'
import { CompileThread } from './query/compile-thread'
import { QueryService } from './query/service'
import { createQueryRunner } from './query/factory'
import { AnalyticsThreads } from './analytics/threads'
import { BackupService } from './backup/service'
import { serviceSources } from './backup/sources'
import { serveBackupControl } from './backup/control'
import { serveImportControl } from './import/control'
import { importDeps } from './import/repository'
import { ImportService } from './import/service'

export interface Lifecycle {
  draining: boolean
}

export interface Services {
  config: Config
  log: Logger
  metrics: Metrics
  db: Database
  events: EventStore
  tokens: ProjectTokenCache
  auth: PersonalKeyAuth
  apiLimiter: RateLimiter
  captureLog: CaptureLog
  capture: CaptureService
  /** /s/: session recordings into the log (src/replay/) */
  recordingIngest: RecordingIngest
  flags: Flags
  cohorts: CohortService
  /** A/B tests on the project's flags, their results counted through `query` */
  experiments: ExperimentsService
  /** surveys and their targeting flags (src/surveys/); the public list posthog-js reads, kept in memory */
  surveys: SurveysService
  publicSurveys: PublicSurveyList
  /** persons erased on request (DELETE /api/projects/:id/persons/:id/) */
  erasure: PersonErasure
  /** console users and sessions */
  users: UserService
  /** HogQL on this thread (the CLI's and the tests' in-process reads); the HTTP API's run on `analytics` */
  query: QueryService
  /** the threads that run the private API's analytics: query API, insights, dashboards, results, events API */
  analytics: AnalyticsThreads
  /** backups of the embedded stores (null on Postgres or ClickHouse: their own tools back them up) */
  backups: BackupService | null
  lifecycle: Lifecycle
  readiness(): Promise<Readiness>
  close(): Promise<void>
}

import { securePrivateDir } from './db/private-files'

const FLUSH_WORKER = new URL('./flush-worker.ts', import.meta.url)

export async function startServices(config: Config, log: Logger, options: { metrics?: Metrics } = {}): Promise<Services> {
  const metrics = options.metrics ?? createMetrics({ defaultMetrics: true })
  const permissions = securePrivateDir(config.DATA_DIR)
  if (permissions.skipped) log.warn({ dataDir: config.DATA_DIR }, `DATA_DIR permissions left as they are: ${permissions.skipped}`)
  if (permissions.fixed > 0) {
    log.warn({ dataDir: config.DATA_DIR, fixed: permissions.fixed, examples: permissions.examples }, `DATA_DIR had ${permissions.fixed} files or directories other users could read: made them private to this user (0700/0600)`)
  }
  // the write-ahead log and the embedded database belong to one live process
  const unlock = await lockDataDir(config.DATA_DIR)
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolMax: config.PG_POOL_MAX,
    statementTimeoutMs: config.PG_STATEMENT_TIMEOUT_MS,
    embeddedFsync: config.EMBEDDED_PG_FSYNC,
  }).catch(async (error) => {
    await unlock()
    throw error
  })
  const closers: (() => Promise<void>)[] = [unlock, () => db.close()]
  // the closers that wait (the analytics threads, the log's drain) share one deadline, within SHUTDOWN_TIMEOUT_MS
  let closeBy = Number.POSITIVE_INFINITY
  const closingTimeLeft = () => Math.max(100, closeBy - Date.now())
  const close = async () => {
    closeBy = Date.now() + Math.max(100, config.SHUTDOWN_TIMEOUT_MS - 1000)
    for (const c of closers.reverse()) await c().catch((error) => log.warn({ err: error }, 'error while closing'))
  }
  try {
    if (!db.embedded) await waitForPostgres(db.sql, config, log)
    // stores a `move` left half done are not served; a finished move is marked served (src/move/marker.ts)
    if (!db.embedded) await refuseUnfinishedMove(db.sql)
    const applied = await migratePostgres(db.sql)
    if (applied.length) log.info({ applied }, 'postgres migrations applied')
    const bootstrapped = await bootstrap(db.sql, {
      projectKey: config.INIT_PROJECT_API_KEY,
      personalKey: config.INIT_PERSONAL_API_KEY,
      adminEmail: config.INIT_ADMIN_EMAIL,
    })
    // PGlite sets the mode of a few files it writes itself (its relation cache init files), whatever the umask
    if (db.embedded) securePrivateDir(config.DATA_DIR)
    if (bootstrapped) log.info('INIT_* keys applied to the new store')
    else if (config.INIT_PROJECT_API_KEY || config.INIT_PERSONAL_API_KEY) {
      log.info('INIT_* keys ignored: the store already has an organization (they are applied once, to an empty store)')
    }

    if (config.INIT_ADMIN_EMAIL && config.INIT_ADMIN_PASSWORD && (await applyInitAdmin(db.sql, config.INIT_ADMIN_EMAIL, config.INIT_ADMIN_PASSWORD))) {
      log.info('INIT_ADMIN_EMAIL / INIT_ADMIN_PASSWORD applied (once: later boots leave the admin user alone)')
    }

    // The service starts even when the event store is down: capture keeps logging, /_ready says not ready.
    const events = new ResilientStore(createEventStore(config, { reads: true }))
    await events.init()
    closers.push(() => events.close())
    if (!config.CLICKHOUSE_URL && config.EMBEDDED_EVENT_STORE === 'duckdb') {
      const duck = await accessDuckDb(duckDbFile(config), duckDbSettings(config))
      closers.push(() => duck.release())
      // an install that kept its events in SQLite: they are copied into DuckDB in the background (sqlite-import.ts)
      closers.push(startSqliteImport(sqliteFile(config), duck, log))
      metrics.embeddedDuckDbMemory.set({ state: 'limit' }, config.EMBEDDED_DUCKDB_MEMORY_MB * 1024 * 1024)
      metrics.beforeScrape.push(async () => {
        const [[used]] = await duck.all('SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()').catch(() => [[null]])
        if (used !== null) metrics.embeddedDuckDbMemory.set({ state: 'used' }, Number(used))
      })
    }
    const queryRunner = createQueryRunner(config, metrics)
    closers.push(() => queryRunner.close())
    const queryCompiler = new CompileThread()
    closers.push(async () => queryCompiler.close())
    if (config.CLICKHOUSE_URL && !(await valueWithin(events.health(), 3000, false))) {
      const { url, database } = parseClickHouseUrl(config.CLICKHOUSE_URL)
      log.warn({ clickhouse: `${url}/${database}` }, 'ClickHouse (CLICKHOUSE_URL) is not reachable: capture keeps logging events, /_ready answers 503 until it answers')
    }

    const tokens = new ProjectTokenCache(db.sql)
    await tokens.start()
    closers.push(async () => tokens.stop())

    const auth = new PersonalKeyAuth(db.sql, {
      unknownPerMinute: config.UNKNOWN_KEY_LOOKUPS_PER_MINUTE,
      trustProxy: config.TRUST_PROXY ? config.TRUST_PROXY_HOPS : false,
    })
    // A token reset or a key revoked by another process (or the CLI) reaches this one's caches.
    const keyChanges = new KeyChangeWatcher(
      db.sql,
      () => {
        auth.forget()
        void tokens.invalidate()
      },
      { checkEveryMs: config.KEY_CHANGE_CHECK_MS, listen: db.supportsNotify },
    )
    const users = new UserService(db.sql, {
      throttle: { perEmail: config.LOGIN_ATTEMPTS_PER_EMAIL, perAddress: config.LOGIN_ATTEMPTS_PER_ADDRESS },
      onAttempt: (outcome) => metrics.loginAttempts.inc({ outcome }),
    })
    auth.sessions = new SessionCookieResolver(users, { trustProxy: config.TRUST_PROXY, originRefused: () => metrics.originRefused.inc() })
    await keyChanges.start()
    closers.push(() => keyChanges.stop())
    const flags = await startFlags({ config, db, tokens, auth, log, metrics })
    closers.push(() => flags.close())
    const cohorts = new CohortService({
      sql: db.sql,
      cache: flags.cache,
      notify: db.supportsNotify,
      onSizeScan: () => metrics.cohortSizeScans.inc(),
      onMembersChanged: async (teamId) => {
        const change: PersonChange = { teamId, distinctIds: [], groups: [], all: true }
        flags.onPersonsChanged(change)
        await notifyPersonChange(db.sql, change)
      },
    })
    const captureLog = new CaptureLog(
      {
        dataDir: config.DATA_DIR,
        segmentBytes: config.WAL_SEGMENT_BYTES,
        fsyncIntervalMs: config.WAL_FSYNC_INTERVAL_MS,
        maxWalBytes: config.WAL_MAX_BYTES,
        projectShareBytes: Math.floor(config.WAL_MAX_BYTES * config.WAL_PROJECT_SHARE),
        worker: { url: FLUSH_WORKER, data: { config } },
        consumers: [STORE_WRITER, LEARNER, RECORDING_WRITER, ERRORS_CONSUMER, ...(historyApart(events.kind) ? [HISTORY_WRITER] : [])],
      },
      // the flush worker's only notice: persons and groups it just wrote (the /decide cache drops them)
      { log, metrics, onNotice: (notice) => flags.onPersonsChanged(notice as PersonChange) },
    )
    // Closers run in reverse: the log drains (the worker catches up) before the stores close.
    closers.push(() => captureLog.drain(closingTimeLeft()).then(() => undefined))
    await captureLog.start()
    // backups while serving (src/backup/): the HTTP route, and the CLI through a socket only this user reaches
    const backupSources = serviceSources(config, db, captureLog)
    const backups = backupSources ? new BackupService(backupSources) : null
    if (backups) closers.push(serveBackupControl(config.DATA_DIR, backups, log))
    // `import events` hands its batches to this process's log through a socket only this user reaches (src/import/)
    closers.push(serveImportControl(config.DATA_DIR, new ImportService(importDeps({ sql: db.sql, events, log: captureLog })), log))
    // the serving thread's connection to the recordings: erasures delete there (the flush worker writes, the
    // analytics threads read, each with its own)
    const recordingStore = createRecordingStore(config)
    await recordingStore.init()
    closers.push(() => recordingStore.close())
    const erasure = new PersonErasure({
      recordings: recordingStore,
      sql: db.sql,
      events,
      eventsStored: (timeoutMs) => captureLog.caughtUp([STORE_WRITER, HISTORY_WRITER], timeoutMs),
      forgetLoggedEvents: () => captureLog.forgetLogged(),
      onErased: (change) => {
        flags.onPersonsChanged(change)
        captureLog.tell(change)
      },
    })
    if (db.supportsNotify) {
      // persons erased by other processes: this process's learner must not take their ids for known any more
      const unlisten = await listenPersonChanges(
        db.sql,
        (change) => change.deleted && captureLog.tell(change),
        () => captureLog.tell({ teamId: -1, distinctIds: [], groups: [], all: true, deleted: true } satisfies PersonChange),
      )
      closers.push(unlisten)
    }
    const capture = new CaptureService({
      tokens,
      auth,
      log: captureLog,
      metrics,
      maxBodyBytes: config.MAX_BODY_BYTES,
      decodeBudget: new DecodeBudget(config.CAPTURE_REFUSED_DECODE_BYTES_PER_SECOND),
    })
    const recordingIngest = new RecordingIngest({
      projectFor: (token, projectId, address) => capture.projectFor(token, projectId, address),
      log: captureLog,
      metrics,
      maxBodyBytes: config.MAX_RECORDING_BODY_BYTES,
      budget: new RecordingBudget({ maxSessionBytes: config.RECORDING_MAX_SESSION_BYTES, maxProjectDailyBytes: config.RECORDING_MAX_PROJECT_DAILY_BYTES }),
    })

    const lifecycle: Lifecycle = { draining: false }
    const readiness = async (): Promise<Readiness> => {
      const [postgres, store] = await Promise.all([
        valueWithin(
          db.sql`select 1`.then(
            () => true,
            (e) => !isConnectionError(e),
          ),
          1000,
          false,
        ),
        valueWithin(events.health(), 1500, false),
      ])
      metrics.storeUp.set({ store: 'postgres' }, postgres ? 1 : 0)
      metrics.storeUp.set({ store: events.kind }, store ? 1 : 0)
      const room = captureLog.hasRoom
      const checks: Record<string, string> = {
        postgres: postgres ? 'ok' : 'unreachable',
        [events.kind === 'clickhouse' ? 'clickhouse' : 'event_store']: store ? 'ok' : 'unreachable',
        write_ahead_log: room ? 'ok' : 'full',
        server: lifecycle.draining ? 'draining' : 'ok',
      }
      // A consumer that has had work for long without finishing any is stuck, even if every store answers.
      let consumersMoving = true
      for (const [name, state] of Object.entries(captureLog.consumerStates())) {
        const stuck = state.behindMs > config.CONSUMER_STALL_MS
        checks[`consumer_${name}`] = stuck ? `stalled ${Math.round(state.behindMs / 1000)} s${state.failing ? `: ${state.failing}` : ''}` : 'ok'
        if (stuck) consumersMoving = false
      }
      const stats = captureLog.stats()
      const backlog = { records: stats.backlogRecords, events: stats.waitingEvents, bytes: stats.backlogBytes, draining: stats.backlogRecords > 0 }
      return { ready: postgres && store && room && consumersMoving && !lifecycle.draining, checks, backlog }
    }

    metrics.beforeScrape.push(readiness) // store_up is current at every scrape
    const query = new QueryService(queryRunner, { timeoutMs: config.QUERY_TIMEOUT_MS, maxResultBytes: config.QUERY_MAX_RESULT_BYTES, metrics, compiler: queryCompiler })
    const experimentActions = new ActionService({ sql: db.sql })
    const experiments = new ExperimentsService({
      sql: db.sql,
      flags: flags.service,
      query,
      ...experimentBudgets(config, metrics),
      actionCondition: (teamId, id, attr) => experimentActions.eventCondition(teamId, id, attr),
    })
    const surveys = new SurveysService({
      sql: db.sql,
      flags: flags.service,
      notify: db.supportsNotify,
      limits: { maxPerProject: config.SURVEYS_MAX_PER_PROJECT, maxQuestions: config.SURVEY_MAX_QUESTIONS, maxChoices: config.SURVEY_MAX_CHOICES, maxBytes: config.SURVEY_MAX_BYTES, onRefused: (limit) => metrics.surveysRefused.inc({ limit }) },
    })
    const publicSurveys = new PublicSurveyList({ sql: db.sql, versions: flags.cache, maxBytes: config.SURVEY_CACHE_MAX_BYTES })
    // the private API's reads of the event store, and the encoding of their answers, run on threads of their own
    const analytics = new AnalyticsThreads({ config, log, metrics })
    // closed first: read-only, its second at most leaves the log's drain the rest of the time
    closers.push(() => analytics.close(Math.min(1000, closingTimeLeft())))
    await analytics.start()
    metrics.beforeScrape.push(async () => {
      const here = query.slotUse()
      const there = await valueWithin(analytics.slotUse(), 1000, { running: 0, waiting: 0 })
      metrics.querySlots.set({ state: 'running' }, here.running + there.running)
      metrics.querySlots.set({ state: 'waiting' }, here.waiting + there.waiting)
    })
    log.info({ postgres: db.describe, events: events.kind }, 'stores ready')
    return {
      config,
      log,
      metrics,
      db,
      events,
      tokens,
      auth,
      apiLimiter: new RateLimiter(config.RATE_LIMIT_API_PER_MINUTE, 60_000),
      captureLog,
      capture,
      recordingIngest,
      flags,
      cohorts,
      experiments,
      surveys,
      publicSurveys,
      erasure,
      users,
      query,
      analytics,
      backups,
      lifecycle,
      readiness,
      close,
    }
  } catch (error) {
    await close()
    throw error
  }
}
