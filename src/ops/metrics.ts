// Prometheus metrics (prom-client), one registry per app instance.
import { heapSize, memoryUsage } from 'bun:jsc'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { TalliedCounter, type Tally } from './tallied-counter'

/**
 * The process's own figures, read from Bun at scrape time. prom-client's default `nodejs_*` metrics read V8
 * statistics Bun only approximates (they showed more heap used than the heap's total), so they are not used.
 */
function processMetrics(registry: Registry): void {
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({ name, help, registers: [registry], collect() { this.set(read()) } })
  gauge('process_resident_memory_bytes', 'Resident memory of the process (all threads)', () => process.memoryUsage.rss())
  gauge('process_cpu_seconds_total', 'User and system CPU time of the process, in seconds', () => {
    const { user, system } = process.cpuUsage()
    return (user + system) / 1e6
  })
  gauge('process_start_time_seconds', 'When the process started, in seconds since the epoch', () => Math.round(Date.now() / 1000 - process.uptime()))
  gauge('bun_heap_size_bytes', 'Bytes of live JavaScript objects in this thread\'s heap (bun:jsc heapSize)', () => heapSize())
  gauge('bun_allocator_bytes', 'Bytes the allocator holds for the process (bun:jsc memoryUsage().current)', () => memoryUsage().current)
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}) {
  const registry = new Registry()
  if (options.defaultMetrics) processMetrics(registry)

  const metrics = {
    registry,
    /** run before every scrape: gauges that read live state (the log's backlog, the stores) set themselves here */
    beforeScrape: [] as (() => void | Promise<unknown>)[],
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route, method and status (499: the client closed the connection before its body arrived)',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [registry],
    }),
    eventLoopLag: new Histogram({
      name: 'event_loop_lag_seconds',
      help: 'How late the serving thread\'s 20 ms timer fired: a turn of its event loop that held everything else (or the CPU kept it off)',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    eventLoopLagMax: new Gauge({
      name: 'event_loop_lag_max_seconds',
      help: 'The serving thread\'s worst event loop lag since the previous scrape',
      registers: [registry],
    }),
    inflightBodyBytes: new Gauge({
      name: 'http_inflight_body_bytes',
      help: 'Request-body bytes being received now (bounded by MAX_INFLIGHT_BODY_BYTES)',
      registers: [registry],
    }),
    bodiesStreamedDeclaredFull: new Counter({
      name: 'http_bodies_streamed_declared_share_full_total',
      help: 'Small bodies read chunk by chunk (reserving what arrived) because declared lengths not yet received held their half of MAX_INFLIGHT_BODY_BYTES',
      registers: [registry],
    }),
    bodyBudgetRefusals: new Counter({
      name: 'http_body_budget_refusals_total',
      help: 'Requests answered 503 because the bytes being received passed MAX_INFLIGHT_BODY_BYTES (process) or one address\'s share of it (address)',
      labelNames: ['scope'] as const,
      registers: [registry],
    }),
    events: new Counter({
      name: 'capture_events_total',
      help: 'Events received by capture, by outcome (accepted, or the reason it was dropped)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    eventsReceived: new Counter({
      name: 'capture_received_events_total',
      help: 'Events in requests capture acknowledged (200), by endpoint, counted at acceptance whatever the stores do next',
      labelNames: ['endpoint'] as const,
      registers: [registry],
    }),
    captureRequests: new Counter({
      name: 'capture_requests_total',
      help: 'Capture requests decoded, by how the JSON was packed (json, gzip, lz64, base64) and carried (body, form, query)',
      labelNames: ['encoding', 'via'] as const,
      registers: [registry],
    }),
    requestsRejected: new Counter({
      name: 'capture_requests_rejected_total',
      help: 'Capture requests refused, by error code',
      labelNames: ['code'] as const,
      registers: [registry],
    }),
    recordingEventsReceived: new Counter({
      name: 'recording_events_received_total',
      help: 'rrweb events in session-recording requests (/s/) acknowledged (durable in the write-ahead log)',
      registers: [registry],
    }),
    recordingBytesRefused: new Counter({
      name: 'recording_bytes_refused_total',
      help: 'Bytes of decoded session-recording JSON (/s/) dropped past a budget, by reason (session_bytes: RECORDING_MAX_SESSION_BYTES, project_daily_bytes: RECORDING_MAX_PROJECT_DAILY_BYTES)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    recordingsRefused: new Counter({
      name: 'recording_requests_refused_total',
      help: 'Session-recording requests (/s/) refused, by error code (invalid_session_id, request_too_large, …)',
      labelNames: ['code'] as const,
      registers: [registry],
    }),
    flushedEvents: new Counter({
      name: 'pipeline_flushed_events_total',
      help: 'Events written to the event store',
      registers: [registry],
    }),
    deadLettered: new Counter({
      name: 'pipeline_dead_lettered_events_total',
      help: 'Events a consumer of the log could not handle for good, written to the dead-letter file, by consumer and reason',
      labelNames: ['consumer', 'reason'] as const,
      registers: [registry],
    }),
    flushFailures: new Counter({
      name: 'pipeline_flush_failures_total',
      help: 'Batches a consumer of the log failed to handle (retried, or split to isolate poison), by consumer and reason',
      labelNames: ['consumer', 'reason'] as const,
      registers: [registry],
    }),
    flushDuration: new Histogram({
      name: 'pipeline_flush_duration_seconds',
      help: 'Time to write one batch to the event store',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    flushBatchSize: new Histogram({
      name: 'pipeline_flush_batch_events',
      help: 'Events per flushed batch',
      buckets: [1, 10, 100, 1000, 5000, 10000, 25000, 50000, 100000],
      registers: [registry],
    }),
    ringDepth: new Gauge({
      name: 'pipeline_ring_depth_events',
      help: 'Events accepted and held in memory, not yet flushed',
      registers: [registry],
    }),
    walBytes: new Gauge({
      name: 'pipeline_wal_unflushed_bytes',
      help: 'Bytes of the write-ahead log not yet flushed to the event store',
      registers: [registry],
    }),
    walLargestProject: new Gauge({
      name: 'pipeline_wal_largest_project_bytes',
      help: 'Unflushed bytes of the write-ahead log held by the project holding most (bounded by WAL_PROJECT_SHARE of WAL_MAX_BYTES)',
      registers: [registry],
    }),
    walGroupWrites: new Counter({
      name: 'pipeline_wal_group_writes_total',
      help: 'Groups the write-ahead log\'s writer wrote, each with one writev (and one fdatasync with WAL_FSYNC_INTERVAL_MS=0): pipeline_wal_group_records_total over this is how many requests shared a write',
      registers: [registry],
    }),
    walGroupRecords: new Counter({
      name: 'pipeline_wal_group_records_total',
      help: 'Records (accepted requests) the write-ahead log\'s writer wrote in groups',
      registers: [registry],
    }),
    walEvents: new Gauge({
      name: 'pipeline_backlog_records',
      help: 'Log records (requests) accepted but not yet flushed',
      registers: [registry],
    }),
    consumerLag: new Gauge({
      name: 'pipeline_consumer_lag_records',
      help: 'Log records (requests) a consumer of the log (store, learn) has not finished',
      labelNames: ['consumer'] as const,
      registers: [registry],
    }),
    consumerBehind: new Gauge({
      name: 'pipeline_consumer_stalled_seconds',
      help: 'How long a consumer of the log has had work waiting without finishing any (0 when caught up)',
      labelNames: ['consumer'] as const,
      registers: [registry],
    }),
    storeUp: new Gauge({
      name: 'store_up',
      help: '1 when the store (postgres, clickhouse or embedded) answers a health check, checked at every scrape and readiness probe',
      labelNames: ['store'] as const,
      registers: [registry],
    }),
    personUpdates: new Counter({
      name: 'ingestion_person_updates_total',
      help: 'Person, distinct id and group writes made by the flusher, by kind',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    errorTrackingIssues: new Counter({
      name: 'error_tracking_issues_total',
      help: 'Error tracking issues made from new fingerprints (created), made active again by a recurrence (reopened), or not made because the project has ERROR_TRACKING_MAX_ISSUES (refused_max_issues: the events are stored, fingerprinted)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    definitionsRefused: new Counter({
      name: 'definitions_refused_total',
      help: 'New definitions not made because the project has MAX_EVENT_DEFINITIONS / MAX_PROPERTY_DEFINITIONS of that kind (the events are stored), by kind',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    decideRequests: new Counter({
      name: 'decide_requests_total',
      help: '/decide and /flags answers, by whether some flags could not be computed',
      labelNames: ['errors'] as const,
      registers: [registry],
    }),
    flagCacheReloads: new Counter({
      name: 'flag_cache_reloads_total',
      help: 'Loads of a project\'s flags into the in-memory cache, by outcome and reason (miss, write, notify, poll, retry, preload, group_types)',
      labelNames: ['outcome', 'reason'] as const,
      registers: [registry],
    }),
    flagWritesRefused: new Counter({
      name: 'flag_writes_refused_total',
      help: 'Flag writes refused by the project budget, by the limit they would pass (footprint, keys, depth)',
      labelNames: ['limit'] as const,
      registers: [registry],
    }),
    personCacheLookups: new Counter({
      name: 'decide_person_cache_lookups_total',
      help: 'Stored person/group properties /decide looked up in memory, by outcome (hit, miss: read from Postgres)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    personCacheBytes: new Gauge({
      name: 'decide_person_cache_bytes',
      help: 'Memory held by cached person/group properties (bounded by PERSON_CACHE_MAX_BYTES)',
      registers: [registry],
    }),
    flagHashMemoBytes: new Gauge({
      name: 'decide_hash_memo_bytes',
      help: 'Memory held by rollout and variant hashes kept across /decide requests (bounded by FLAG_HASH_MEMO_BYTES)',
      registers: [registry],
    }),
    personCacheEntries: new Gauge({
      name: 'decide_person_cache_entries',
      help: 'Persons and groups whose properties are cached for /decide',
      registers: [registry],
    }),
    loginAttempts: new Counter({
      name: 'login_attempts_total',
      help: 'Sign-in attempts by outcome: success and wrong_password are the password checks made; throttled (429) and invalid were not checked',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    originRefused: new Counter({
      name: 'csrf_origin_refused_total',
      help: 'Browser writes refused (403 csrf_failed) because their Origin or Referer is not this server\'s own origin',
      registers: [registry],
    }),
    queryRequests: new Counter({
      name: 'query_requests_total',
      help: 'Query API requests by outcome: ok, truncated (the answer reached QUERY_MAX_RESULT_BYTES), too_large, invalid, timeout, client_closed, unavailable, busy (503 store_busy: the embedded store short of memory beside other queries)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    insightFunnelEvents: new Counter({
      name: 'insight_funnel_events_total',
      help: 'Events read by funnel insights (outcome="read"), and those of pages that went past INSIGHTS_FUNNEL_MAX_EVENTS (outcome="refused": the funnel answered 400 too_many_events)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    insightPersonScans: new Counter({
      name: 'insight_person_scans_total',
      help: 'Scans of a project\'s persons made for insights\' person and cohort filters (one a query, whatever its series and periods)',
      registers: [registry],
    }),
    cohortSizeScans: new Counter({
      name: 'cohort_size_scans_total',
      help: 'Scans of a project\'s persons made to size a dynamic cohort when it is read (concurrent reads of one cohort share one scan)',
      registers: [registry],
    }),
    insightQueriesRefused: new Counter({
      name: 'insight_queries_refused_total',
      help: 'Insight queries of the query API refused (400), by code: too_many_person_filters (past MAX_PERSON_FILTERS, before any scan), too_many_results (past MAX_RESULT_CELLS, before the arrays are made), too_many_buckets, unsupported…',
      labelNames: ['code'] as const,
      registers: [registry],
    }),
    embeddedDuckDbMemory: new Gauge({
      name: 'embedded_duckdb_memory_bytes',
      help: 'EMBEDDED_EVENT_STORE=duckdb: memory DuckDB holds now (state="used", its buffer manager) and may hold (state="limit", EMBEDDED_DUCKDB_MEMORY_MB)',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
    analyticsRequests: new Counter({
      name: 'analytics_requests_total',
      help: 'Private API reads run on the analytics threads, by operation and outcome (ok, error, timeout: answered 504 by the serving thread at the deadline, busy: 503 past ANALYTICS_QUEUE_PER_THREAD, client_closed, thread_failed)',
      labelNames: ['op', 'outcome'] as const,
      registers: [registry],
    }),
    analyticsQueue: new Gauge({
      name: 'analytics_requests_in_flight',
      help: 'Requests running or waiting on the analytics threads now',
      registers: [registry],
    }),
    analyticsAnswerBytes: new Histogram({
      name: 'analytics_answer_bytes',
      help: 'Encoded answers the analytics threads handed to the serving thread, in bytes',
      buckets: [1024, 16 * 1024, 256 * 1024, 1024 * 1024, 8 * 1024 * 1024, 32 * 1024 * 1024, 128 * 1024 * 1024],
      registers: [registry],
    }),
    analyticsAnswersRefused: new Counter({
      name: 'analytics_answers_refused_total',
      help: 'Analytics answers refused after they were computed, by reason (too_large: past ANALYTICS_MAX_ANSWER_BYTES)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    embeddedDuckDbShortOfMemory: new Counter({
      name: 'embedded_duckdb_short_of_memory_total',
      help: 'EMBEDDED_EVENT_STORE=duckdb: query API statements that met DuckDB short of memory, by outcome: retried_alone (short beside other statements: run again alone), store_busy (503: no turn within EMBEDDED_DUCKDB_BUSY_WAIT_MS), too_large_alone (400: short with no other statement running)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    querySlots: new Gauge({
      name: 'query_slots',
      help: 'Query API statements running and waiting for a slot (slots are shared fairly between projects)',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
    propertyValueRequests: new Counter({
      name: 'event_property_values_requests_total',
      help: 'Property value suggestions (GET /api/projects/:id/events/values/) by outcome: ok, refused (400: key, value or event_name past its bound, or a key no store can address), failed (the query failed or timed out)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    listPagesCut: new Counter({
      name: 'list_pages_cut_total',
      help: 'List pages that stopped short of their limit at their byte budget (next continues), by list',
      labelNames: ['list'] as const,
      registers: [registry],
    }),
    insightWritesRefused: new Counter({
      name: 'insight_writes_refused_total',
      help: 'Saved insight and dashboard writes refused (400), by the field at fault (project_cap: a project\'s insights or dashboards at their cap)',
      labelNames: ['field'] as const,
      registers: [registry],
    }),
    insightRefreshes: new Counter({
      name: 'insight_refreshes_total',
      help: 'Saved insight results computed (an insight read, or a dashboard tile, with refresh), by outcome: stored, too_large_to_store (over 1 MiB: answered, not kept), failed, skipped_budget (a dashboard refresh out of time), skipped_busy (the project\'s dashboard refreshes at their cap: the stored result shown)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    decideStoredLoads: new Counter({
      name: 'decide_stored_properties_loads_total',
      help: '/decide reads of stored person/group properties (only when a flag needs more than the request gave), by outcome',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    queryCompileRefused: new Counter({
      name: 'query_compile_refused_total',
      help: 'Query API queries refused before they ran, by the limit they went past (text, tokens, depth, work, statement, time…)',
      labelNames: ['limit'] as const,
      registers: [registry],
    }),
    experimentResultsSampled: new Counter({
      name: 'experiment_results_sampled_total',
      help: 'Experiment results computed on a uniform sample of persons, by the cap past which they were: exposed_persons (EXPERIMENT_MAX_EXPOSED_PERSONS) or metric_rows (EXPERIMENT_MAX_METRIC_ROWS)',
      labelNames: ['limit'] as const,
      registers: [registry],
    }),
    surveysRefused: new Counter({
      name: 'surveys_refused_total',
      help: 'Survey writes refused by a budget: limit = surveys_per_project (SURVEYS_MAX_PER_PROJECT), questions (SURVEY_MAX_QUESTIONS), choices (SURVEY_MAX_CHOICES), bytes (SURVEY_MAX_BYTES)',
      labelNames: ['limit'] as const,
      registers: [registry],
    }),
    experimentExposureFlood: new Counter({
      name: 'experiment_exposure_flood_total',
      help: 'Experiment results answered with the exposures_unexplained warning: more persons exposed (by $feature_flag_called) without a $pageview, $pageleave, $autocapture, $screen or metric event carrying $feature/<flag> than with one (at least 100)',
      registers: [registry],
    }),
    queryCompileSeconds: new Histogram({
      name: 'query_compile_seconds',
      help: 'Time the query API spent parsing and compiling one query (on a thread of its own, not the one that serves requests)',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers: [registry],
    }),
  }
  return {
    ...metrics,
    countHttpRequest: httpRequestCounter(metrics.httpRequests),
    // counted on every /decide and capture request
    decideAnswers: new TalliedCounter(metrics.decideRequests),
    captureRequestTallies: new TalliedCounter(metrics.captureRequests),
    eventsReceivedTallies: new TalliedCounter(metrics.eventsReceived),
    personCacheLookupTallies: new TalliedCounter(metrics.personCacheLookups),
    decideStoredLoadTallies: new TalliedCounter(metrics.decideStoredLoads),
  }
}

/** Label sets of http_requests_total found without building a key; past this many (odd methods), by key. */
const MAX_REQUEST_COUNTERS = 512

/**
 * `http_requests_total` for one answered request: every request counts, so its label set's tally is found through
 * route, method and status maps (no key string built a request) and counted in a number (tallied-counter.ts).
 */
function httpRequestCounter(counter: Counter<'route' | 'method' | 'status'>) {
  const tallies = new TalliedCounter(counter, MAX_REQUEST_COUNTERS)
  const byRoute = new Map<string, Map<string, Map<number, Tally>>>()
  let found = 0
  return (route: string, method: string, status: number): void => {
    let byMethod = byRoute.get(route)
    let byStatus = byMethod?.get(method)
    let tally = byStatus?.get(status)
    if (tally === undefined) {
      tally = tallies.of(`${status} ${method} ${route}`, { route, method, status })
      if (found < MAX_REQUEST_COUNTERS) {
        found++
        if (byMethod === undefined) byRoute.set(route, (byMethod = new Map()))
        if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()))
        byStatus.set(status, tally)
      }
    }
    tally.inc()
  }
}

export type Metrics = ReturnType<typeof createMetrics>
