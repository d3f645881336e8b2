// The feature-flag capability, wired: the cache (kept fresh across processes), the REST service and /decide.
import type { Config } from '../config'
import type { Database } from '../db/postgres'
import type { PersonalKeyAuth } from '../projects/auth'
import { RateLimiter } from '../http/rate-limit'
import { throttled, type Logger } from '../log'
import type { Metrics } from '../ops/metrics'
import type { ProjectTokenCache } from '../projects/token-cache'
import { PersonCache, type PersonChange } from '../people/person-cache'
import { listenPersonChanges } from '../people/person-changes'
import { loadStoredPropertiesSized } from '../people/stored-properties'
import { FlagCache } from './cache'
import { HashMemo } from './engine'
import { DecideService } from './decide/service'
import { postgresFlagSource } from './repository'
import { FlagService } from './service'

export interface Flags {
  cache: FlagCache
  service: FlagService
  decide: DecideService
  /** the stored person/group properties /decide reads; told of changes by the flush worker (onPersonsChanged) */
  persons: PersonCache
  onPersonsChanged(change: PersonChange): void
  close(): Promise<void>
}

export async function startFlags(deps: {
  config: Config
  db: Database
  tokens: ProjectTokenCache
  auth: PersonalKeyAuth
  log: Logger
  metrics: Metrics
}): Promise<Flags> {
  const { config, db, log, metrics } = deps
  // while Postgres is down these fire on every reload attempt and request: one line per 10 s is enough
  const warnOnce = throttled(10_000)
  const cache = new FlagCache(postgresFlagSource(db.sql, { listen: db.supportsNotify }), {
    refreshIntervalMs: config.FLAG_REFRESH_INTERVAL_MS,
    onReload: (outcome, reason) => metrics.flagCacheReloads.inc({ outcome, reason }),
    onError: (error, what) => warnOnce(`cache:${what}`, (suppressed) => log.warn({ err: error, what, suppressed }, 'flag cache')),
  })
  await cache.start()
  const service = new FlagService({ sql: db.sql, cache, notify: db.supportsNotify, onBudgetRefused: (limit) => metrics.flagWritesRefused.inc({ limit }) })
  // one lookup a /decide request: counted in numbers, handed to the counter when it is read
  const lookups = { hit: metrics.personCacheLookupTallies.of('hit', { outcome: 'hit' }), miss: metrics.personCacheLookupTallies.of('miss', { outcome: 'miss' }) }
  const persons = new PersonCache((request) => loadStoredPropertiesSized(db.sql, request), {
    maxBytes: config.PERSON_CACHE_MAX_BYTES,
    ttlMs: config.PERSON_CACHE_TTL_MS,
    onLookup: (outcome) => lookups[outcome].inc(),
  })
  metrics.beforeScrape.push(() => {
    metrics.personCacheBytes.set(persons.size.bytes)
    metrics.personCacheEntries.set(persons.size.entries)
  })
  // Other processes' flush workers write persons too: their changes arrive by NOTIFY (real Postgres). Without
  // that feed nothing tells this process, so an entry lives one second at most.
  let unlistenPersons: (() => Promise<void>) | null = null
  if (db.supportsNotify) {
    try {
      unlistenPersons = await listenPersonChanges(db.sql, (change) => persons.invalidate(change), () => persons.clear())
    } catch (error) {
      log.warn({ err: error }, 'person changes: cannot LISTEN; cached persons expire after 1 s instead')
      persons.limitTtl(1000)
    }
  }
  const hashMemo = new HashMemo(config.FLAG_HASH_MEMO_BYTES)
  metrics.beforeScrape.push(() => metrics.flagHashMemoBytes.set(hashMemo.size.bytes))
  const decide = new DecideService({
    hashMemo,
    sql: db.sql,
    cache,
    tokens: deps.tokens,
    auth: deps.auth,
    limiter: new RateLimiter(config.RATE_LIMIT_DECIDE_PER_SECOND, 1000),
    maxBodyBytes: config.MAX_BODY_BYTES,
    storedProperties: (request) => persons.get(request),
    cachedPerson: (teamId, distinctId) => persons.cachedPerson(teamId, distinctId),
    cachedGroup: (teamId, index, key) => persons.cachedGroup(teamId, index, key),
    onStoredLoad: (outcome) => metrics.decideStoredLoadTallies.of(outcome, { outcome }).inc(),
    onError: (error, what) =>
      warnOnce(`decide:${what}`, (suppressed) => log.warn({ err: error, what, suppressed }, 'decide: answering without what could not be read')),
  })
  return {
    cache,
    service,
    decide,
    persons,
    onPersonsChanged: (change) => persons.invalidate(change),
    async close() {
      await unlistenPersons?.().catch(() => undefined)
      await cache.stop()
    },
  }
}
