// /decide and /flags: which flags a user has. Never sees the HTTP context.
//
// project key → the project's flags from the in-memory cache → request overrides, and stored person/group
// properties only when a flag needs more (one query) → the pure engine → the answer shaped by version.
// Postgres down: flags needing no stored data are still answered, the others are left out with
// errorsWhileComputingFlags; nothing on this path queries Postgres unless a flag needs stored data.
import type { Sql } from 'postgres'
import { isConnectionError } from '../../db/postgres'
import { TimeoutError, withTimeout } from '../../lib/timeout'
import type { PersonalKeyAuth } from '../../projects/auth'
import type { RawPayload } from '../../http/decode'
import { ApiError, errors } from '../../http/errors'
import type { RateLimiter } from '../../http/rate-limit'
import { wellFormedText } from '../../db/text'
import type { CachedPerson } from '../../people/person-cache'
import type { StoredProperties, StoredPropertiesRequest } from '../../people/stored-properties'
import { projectOfPublicKey } from '../../projects/public-key'
import type { ProjectTokenCache } from '../../projects/token-cache'
import type { FlagCache, ProjectEntry } from '../cache'
import { evaluateFlag, storedDataNeeded, type CompiledFlag, type EvalInput, type FlagOutcome, type FlagResult, type HashMemo } from '../engine'
import { pyStr } from '../engine/python/pyvalue'
import { hashKeyOverrides } from '../repository'
import {
  anonDistinctId,
  findDistinctId,
  findToken,
  flagKeysToEvaluate,
  overridesOf,
  processBool,
  readBody,
  responseFormat,
  type Overrides,
  type ResponseFormat,
} from './request'
import { decideResponse, type Evaluated } from './response'

export interface DecideDeps {
  sql: Sql
  cache: FlagCache
  tokens: ProjectTokenCache
  auth: PersonalKeyAuth
  limiter: RateLimiter
  maxBodyBytes: number
  /** the stored person and groups (from memory when cached: people/person-cache.ts) */
  storedProperties(request: StoredPropertiesRequest): Promise<StoredProperties>
  /** what is in memory now, without waiting (undefined: not cached) */
  cachedPerson?(teamId: number, distinctId: string): CachedPerson | undefined
  cachedGroup?(teamId: number, index: number, key: string): Record<string, unknown> | null | undefined
  /** longest wait for stored properties before answering without them */
  storedTimeoutMs?: number
  onStoredLoad?(outcome: 'ok' | 'error' | 'skipped'): void
  onError?(error: unknown, what: string): void
  /** rollout and variant hashes of returning users, kept across requests (absent: hashed every request) */
  hashMemo?: HashMemo
}

export interface DecideAnswer {
  /** the answer as JSON text */
  body: string
  errors: boolean
}

const SURVEY_PREFIX = 'survey-targeting-'
const DOWN_BACKOFF_MS = 1000

// Requests within the same millisecond share one `now`: the engine then reuses what it derived from it
// (relative dates, parsed date values) instead of recomputing them per request.
let lastNow = new Date(0)
function currentTime(): Date {
  const ms = Date.now()
  if (ms !== lastNow.getTime()) lastNow = new Date(ms)
  return lastNow
}

export class DecideService {
  /** after Postgres failed us, skip stored-data reads until then (requests do not queue behind a dead server) */
  private downUntil = 0

  constructor(private readonly deps: DecideDeps) {}

  /** The project of the request's key: a project key, or a personal key with project_id. */
  private projectFor(token: string | null, data: Record<string, unknown>, clientAddress: string | null): number | Promise<number> {
    if (token === null) {
      throw new ApiError(
        401,
        'authentication_error',
        'no_api_key',
        'No project API key provided. You can find your project API key in PostHog project settings.',
      )
    }
    return projectOfPublicKey(this.deps, token, data.project_id, clientAddress, 'feature_flag:read')
  }

  async decide(endpoint: 'decide' | 'flags', raw: RawPayload, clientAddress: string | null = null): Promise<DecideAnswer> {
    const format: ResponseFormat = responseFormat(endpoint, raw.query)
    const { data, form } = readBody(raw, this.deps.maxBodyBytes)
    const project = this.projectFor(findToken(data, form, raw.query), data, clientAddress)
    const teamId = typeof project === 'number' ? project : await project
    const wait = this.deps.limiter.take(String(teamId))
    if (wait > 0) throw errors.throttled(wait)
    const distinctId = findDistinctId(data)
    const requestId = crypto.randomUUID()

    // the project's entry also holds what the config tells posthog-js (session replay): read even with disable_flags
    let entry: ProjectEntry | undefined = this.deps.cache.peek(teamId)
    if (entry === undefined) {
      try {
        entry = await this.deps.cache.get(teamId)
      } catch (error) {
        // never loaded and Postgres unreachable: nothing can be computed (recording stays off)
        this.deps.onError?.(error, 'flag cache load')
        if (processBool(data.disable_flags)) return { body: decideResponse(format, 'disabled', requestId), errors: false }
        return { body: decideResponse(format, { flags: [], results: [], errors: true }, requestId), errors: true }
      }
    }
    if (processBool(data.disable_flags)) return { body: decideResponse(format, 'disabled', requestId, Date.now(), entry.capabilities), errors: false }
    const overrides = overridesOf(data, distinctId)
    for (const name in overrides.groups) {
      if (!entry.groupTypeIndexes.has(name)) {
        entry = (await this.deps.cache.refreshGroupTypes(teamId, Object.keys(overrides.groups))) ?? entry
        break
      }
    }
    const evaluated = await this.evaluate(entry, data, distinctId, overrides, raw.query)
    return { body: decideResponse(format, evaluated, requestId, Date.now(), entry.capabilities), errors: evaluated.errors }
  }

  private selectFlags(entry: ProjectEntry, data: Record<string, unknown>, query: URLSearchParams): readonly CompiledFlag[] {
    const keys = flagKeysToEvaluate(data)
    const surveysOnly = query.get('only_evaluate_survey_feature_flags') === 'true'
    if (keys === null && !surveysOnly) return entry.active
    return entry.active.filter((f) => (keys === null || keys.has(f.key)) && (!surveysOnly || f.key.startsWith(SURVEY_PREFIX)))
  }

  /**
   * Evaluate from the request alone first; only the flags that asked for stored data (and experience-continuity
   * flags, which need their hash keys) wait for Postgres, with one read for all of them. Flags that depend on flags
   * are evaluated after their dependencies (and those are evaluated even when not asked for), cohorts come from the
   * cache, and the person's static cohorts are read with the person.
   */
  private async evaluate(
    entry: ProjectEntry,
    data: Record<string, unknown>,
    distinctId: string,
    overrides: Overrides,
    query: URLSearchParams,
  ): Promise<Evaluated> {
    const plan = entry.dependencies.plan(this.selectFlags(entry, data, query))
    const flags = plan.flags
    const outcomes = entry.dependencies.hasDependencies ? new Map<number, FlagOutcome>() : undefined
    const input: EvalInput = {
      distinctId,
      groups: overrides.groups,
      groupTypeNames: entry.groupTypeNames,
      personOverrides: overrides.personOverrides,
      groupOverrides: overrides.groupOverrides,
      storedPerson: undefined,
      storedGroups: undefined,
      now: currentTime(),
      cohorts: entry.cohorts,
      flagOutcomes: outcomes,
      hashMemo: this.deps.hashMemo,
    }
    // A returning user's person (and groups) usually sit in memory: with them, one pass decides every flag.
    this.fromMemory(entry, distinctId, overrides, input)
    const results: (FlagResult | null)[] = new Array(flags.length).fill(null)
    let errors = plan.cyclic.size > 0 && [...plan.cyclic].some((i) => i < plan.asked)
    for (const i of plan.cyclic) outcomes?.set(flags[i].id, { ok: false, key: flags[i].key, error: 'evaluation_error' })
    let deferred: number[] | null = null
    let continuity = false
    for (const i of plan.order) {
      const flag = flags[i]
      if (flag.ensureExperienceContinuity && flag.aggregationGroupTypeIndex === null) {
        continuity = true
        ;(deferred ??= []).push(i)
        outcomes?.set(flag.id, { ok: false, key: flag.key, error: 'needs_stored_data' })
        continue
      }
      const outcome = evaluateFlag(flag, input)
      outcomes?.set(flag.id, outcome)
      if (outcome.ok) results[i] = outcome.result
      else if (outcome.error === 'needs_stored_data') (deferred ??= []).push(i)
      else if (i < plan.asked) errors = true
    }

    if (deferred !== null) {
      const later = deferred.map((i) => flags[i])
      const needed = storedDataNeeded(later, input)
      if (input.storedPerson !== undefined) {
        needed.person = false
        needed.memberships = false
      }
      for (const name of needed.groupTypes) if (input.storedGroups?.has(name)) needed.groupTypes.delete(name)
      const [stored, hashKeys] = await Promise.all([
        needed.person || needed.memberships || needed.groupTypes.size > 0 ? this.stored(entry, distinctId, needed, overrides) : null,
        continuity ? this.hashKeys(entry.teamId, later, distinctId, anonDistinctId(data)) : undefined,
      ])
      if (stored) {
        if (stored.person !== undefined) {
          input.storedPerson = stored.person
          input.staticCohorts = stored.staticCohorts
        }
        if (input.storedGroups) for (const [name, value] of input.storedGroups) stored.groups.set(name, value)
        input.storedGroups = stored.groups
      }
      if (hashKeys) input.hashKeyOverrides = hashKeys
      for (const i of deferred) {
        const flag = flags[i]
        let outcome: FlagOutcome
        if (hashKeys === null && flag.ensureExperienceContinuity && flag.aggregationGroupTypeIndex === null) {
          outcome = { ok: false, key: flag.key, error: 'evaluation_error' }
        } else outcome = evaluateFlag(flag, input)
        outcomes?.set(flag.id, outcome)
        if (outcome.ok) results[i] = outcome.result
        else if (i < plan.asked) errors = true
      }
    }

    const out: Evaluated = { flags: [], results: [], errors }
    for (let i = 0; i < plan.asked; i++) {
      const r = results[i]
      if (r) {
        out.flags.push(flags[i])
        out.results.push(r)
      }
    }
    return out
  }

  /** Stored properties already in memory go into the input before any flag is evaluated. */
  private fromMemory(entry: ProjectEntry, distinctId: string, overrides: Overrides, input: EvalInput): void {
    const { cachedPerson, cachedGroup } = this.deps
    if (!cachedPerson || !cachedGroup || !entry.needsStored) return
    const person = cachedPerson(entry.teamId, wellFormedText(distinctId))
    if (person !== undefined) {
      input.storedPerson = person.properties
      input.staticCohorts = person.staticCohorts
    }
    for (const name in overrides.groups) {
      const index = entry.groupTypeIndexes.get(name)
      const key: unknown = overrides.groups[name]
      if (index === undefined || key === undefined || key === null) continue
      const value = cachedGroup(entry.teamId, index, wellFormedText(typeof key === 'string' ? key : pyStr(key)))
      if (value !== undefined) ((input.storedGroups ??= new Map()) as Map<string, Record<string, unknown> | null>).set(name, value)
    }
  }

  private postgresDown(): boolean {
    return Date.now() < this.downUntil
  }

  private failed(error: unknown, what: string): void {
    if (error instanceof TimeoutError || isConnectionError(error)) this.downUntil = Date.now() + DOWN_BACKOFF_MS
    this.deps.onError?.(error, what)
  }

  /** The stored person and groups the flags need, in one query; null when Postgres cannot give them. */
  private async stored(
    entry: ProjectEntry,
    distinctId: string,
    needed: { person: boolean; groupTypes: Set<string>; memberships?: boolean },
    overrides: Overrides,
  ): Promise<{
    person: Record<string, unknown> | null | undefined
    groups: Map<string, Record<string, unknown> | null>
    staticCohorts?: ReadonlySet<number>
  } | null> {
    if (this.postgresDown()) {
      this.deps.onStoredLoad?.('skipped')
      return null
    }
    const groups: [number, string][] = []
    const names: string[] = []
    for (const name of needed.groupTypes) {
      const index = entry.groupTypeIndexes.get(name)
      const key: unknown = overrides.groups[name]
      if (index === undefined || key === undefined || key === null) continue
      // as ingestion stored them (NUL and unpaired surrogates replaced)
      groups.push([index, wellFormedText(typeof key === 'string' ? key : pyStr(key))])
      names.push(name)
    }
    try {
      const loaded = await withTimeout(
        // the person comes with its static cohorts (memberships): asking for either reads both
        this.deps.storedProperties({ teamId: entry.teamId, distinctId: needed.person || needed.memberships ? wellFormedText(distinctId) : undefined, groups }),
        this.deps.storedTimeoutMs ?? 2000,
      )
      this.deps.onStoredLoad?.('ok')
      const byName = new Map<string, Record<string, unknown> | null>()
      for (let i = 0; i < names.length; i++) byName.set(names[i], loaded.groups.get(groups[i][0]) ?? null)
      return { person: loaded.person, groups: byName, staticCohorts: loaded.staticCohorts }
    } catch (error) {
      this.deps.onStoredLoad?.('error')
      this.failed(error, 'stored properties')
      return null
    }
  }

  /** Experience-continuity hash keys (written first when $anon_distinct_id is given); null when unavailable. */
  private async hashKeys(
    teamId: number,
    flags: readonly CompiledFlag[],
    distinctId: string,
    anonId: string | null,
  ): Promise<Record<string, string> | null> {
    if (this.postgresDown()) return null
    const keys = flags.filter((f) => f.ensureExperienceContinuity && f.aggregationGroupTypeIndex === null).map((f) => f.key)
    try {
      return await withTimeout(
        hashKeyOverrides(
          this.deps.sql,
          teamId,
          anonId ? [wellFormedText(distinctId), wellFormedText(anonId)] : [wellFormedText(distinctId)],
          anonId ? { hashKey: wellFormedText(anonId), flagKeys: keys } : null,
        ),
        this.deps.storedTimeoutMs ?? 2000,
      )
    } catch (error) {
      this.failed(error, 'hash key overrides')
      return null
    }
  }
}
