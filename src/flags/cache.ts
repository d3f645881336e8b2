// The in-memory flag cache: each project's flags (and the cohorts they use, and their dependency order) compiled
// once and served from memory, kept fresh across processes; cohort writes bump the same version as flag writes. A write through the REST API refreshes the writer's entry before it answers; other processes
// hear of it by NOTIFY (real Postgres) and, as the safety net and the only mechanism on the embedded PGlite,
// by comparing each cached project's version with Postgres every FLAG_REFRESH_INTERVAL_MS.
//
// When Postgres cannot be reached, entries already loaded keep answering (stale beats down); reload attempts
// are then spaced out so that requests never queue behind a dead connection.
import { CohortSet, compileFlag, DependencyGraph, type CompiledFlag, type MemoTable } from './engine'
import type { CachedCohortRow, CachedFlagRow, ProjectFlags, ProjectStamp } from './repository'
import { clientCapabilities, DEFAULT_CAPABILITIES, type ClientCapabilities } from '../remote-config/capabilities'
import { recordingSettingsOf } from '../projects/recording-settings'

export interface FlagSource {
  load(teamId: number): Promise<ProjectFlags>
  stamps(teamIds: number[]): Promise<ProjectStamp[]>
  /** the project's group types alone: index → name */
  groupTypes(teamId: number): Promise<[number, string][]>
  /** projects worth loading at boot */
  knownProjects(): Promise<number[]>
  /** subscribe to change notifications; `onReconnect` runs whenever the subscription is (re)established */
  listen?(onChange: (teamId: number) => void, onReconnect: () => void): Promise<() => Promise<void>>
}

export interface ProjectEntry {
  readonly teamId: number
  readonly version: number
  /** every flag that is not deleted, as stored (local_evaluation sends them all, inactive ones too) */
  readonly rows: readonly CachedFlagRow[]
  /** the active flags, compiled, in id order: what /decide evaluates */
  readonly active: readonly CompiledFlag[]
  readonly hasContinuityFlags: boolean
  /** some active flag reads person or group properties (else /decide never looks at stored ones) */
  readonly needsStored: boolean
  readonly groupTypeNames: ReadonlyMap<number, string>
  readonly groupTypeIndexes: ReadonlyMap<string, number>
  /** the cohorts the flags use (and those they nest), as stored: what local_evaluation sends */
  readonly cohortRows: readonly CachedCohortRow[]
  /** the same cohorts, compiled: what /decide evaluates cohort filters with */
  readonly cohorts: CohortSet
  /** which active flags depend on which: the order /decide evaluates them in */
  readonly dependencies: DependencyGraph
  /**
   * what /decide, /flags and the remote config tell posthog-js (session replay from the project's settings): made
   * when the project is loaded, the same object while its settings do not change (answers memoise their text by it)
   */
  readonly capabilities: ClientCapabilities
  /** the settings it was made from, as JSON (a reload compares them to keep the object) */
  readonly capabilitiesSource: string
  readonly loadedAt: number
  /** memo for local_evaluation (body and ETag), made on first use; one with cohorts (send_cohorts), one without */
  localEvaluation?: { body: string; etag: string }
  localEvaluationWithCohorts?: { body: string; etag: string }
}

export interface FlagCacheOptions {
  refreshIntervalMs: number
  /** how long after a failed load to serve the stale entry without trying again */
  retryAfterMs?: number
  /** at most one group type reload per project this often, when a request names an unknown group type */
  groupTypeRefreshMs?: number
  preloadLimit?: number
  onReload?(outcome: 'ok' | 'error', reason: string): void
  onError?(error: unknown, what: string): void
}

/** The same flags with another group type mapping (the compiled flags, and what was derived from them, are kept). */
function withGroupTypes(entry: ProjectEntry, groupTypes: [number, string][]): ProjectEntry {
  return {
    ...entry,
    groupTypeNames: new Map(groupTypes),
    groupTypeIndexes: new Map(groupTypes.map(([index, name]) => [name, index])),
    localEvaluation: undefined,
    localEvaluationWithCohorts: undefined,
  }
}

/**
 * A project's entry. Flags whose version did not change since `previous` keep their compiled form: a write to
 * one flag compiles that flag, not the project's hundreds (every flag write bumps that flag's version).
 */
export function buildEntry(teamId: number, data: ProjectFlags, now = Date.now(), previous?: ProjectEntry): ProjectEntry {
  const reusable = new Map<number, CompiledFlag>()
  for (const compiled of previous?.active ?? []) reusable.set(compiled.id, compiled)
  const active: CompiledFlag[] = []
  let hasContinuityFlags = false
  let needsStored = false
  for (const row of data.flags) {
    if (!row.active || row.deleted) continue
    const kept = reusable.get(row.id)
    const compiled = kept && kept.version === row.version && kept.key === row.key ? kept : compileFlag(row)
    active.push(compiled)
    if (compiled.ensureExperienceContinuity) hasContinuityFlags = true
    if (compiled.superCondition.kind === 'properties' || compiled.conditions.some((c) => c.props !== null && c.props.length > 0)) needsStored = true
  }
  // the hash memo's array slots of this table (a kept flag is placed again: its old table's slots stay its own)
  const memoTable: MemoTable = { size: active.length }
  for (let i = 0; i < active.length; i++) {
    active[i].memoTable = memoTable
    active[i].memoSlot = i
  }
  const cohortRows = data.cohorts ?? []
  // cohorts whose version did not change keep their compiled filters too
  const previousVersions = new Map((previous?.cohortRows ?? []).map((c) => [c.id, c.version]))
  const versions = new Map(cohortRows.map((c) => [c.id, c.version]))
  const cohorts = cohortRows.length === 0 ? CohortSet.EMPTY : new CohortSet(cohortRows, previous?.cohorts, (id) => previousVersions.get(id) === versions.get(id))
  const surveys = data.surveys === true
  const autocaptureExceptions = data.autocaptureExceptions === true
  const capabilitiesSource = JSON.stringify([data.recording ?? null, surveys, autocaptureExceptions])
  const capabilities =
    previous?.capabilitiesSource === capabilitiesSource
      ? previous.capabilities
      : data.recording || surveys || autocaptureExceptions
        ? Object.freeze(clientCapabilities({ recording: recordingSettingsOf(data.recording ?? {}), surveys, autocaptureExceptions }))
        : DEFAULT_CAPABILITIES
  return {
    teamId,
    version: data.version,
    rows: data.flags,
    active,
    hasContinuityFlags,
    needsStored,
    groupTypeNames: new Map(data.groupTypes),
    groupTypeIndexes: new Map(data.groupTypes.map(([index, name]) => [name, index])),
    cohortRows,
    cohorts,
    dependencies: new DependencyGraph(active),
    capabilities,
    capabilitiesSource,
    loadedAt: now,
  }
}

interface Loading {
  generation: number
  promise: Promise<ProjectEntry>
}

export class FlagCache {
  private readonly entries = new Map<number, ProjectEntry>()
  /** bumped by every invalidation: a load only makes an entry fresh if no invalidation happened meanwhile */
  private readonly generations = new Map<number, number>()
  private readonly stale = new Set<number>()
  private readonly loading = new Map<number, Loading>()
  private readonly failedAt = new Map<number, number>()
  private readonly groupTypesCheckedAt = new Map<number, number>()
  private timer: ReturnType<typeof setInterval> | undefined
  private checking = false
  private unlisten: (() => Promise<void>) | null = null
  private readonly retryAfterMs: number
  private readonly groupTypeRefreshMs: number

  constructor(
    private readonly source: FlagSource,
    private readonly options: FlagCacheOptions,
  ) {
    this.retryAfterMs = options.retryAfterMs ?? 1000
    this.groupTypeRefreshMs = options.groupTypeRefreshMs ?? 1000
  }

  async start(): Promise<void> {
    try {
      const teams = await this.source.knownProjects()
      await Promise.all(teams.slice(0, this.options.preloadLimit ?? 1000).map((t) => this.load(t, 'preload').catch(() => undefined)))
    } catch (error) {
      this.options.onError?.(error, 'preload')
    }
    if (this.source.listen) {
      try {
        this.unlisten = await this.source.listen(
          (teamId) => this.invalidate(teamId, 'notify'),
          () => void this.check(),
        )
      } catch (error) {
        this.options.onError?.(error, 'listen')
      }
    }
    this.timer = setInterval(() => void this.check(), this.options.refreshIntervalMs)
    this.timer.unref?.()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    const unlisten = this.unlisten
    this.unlisten = null
    await unlisten?.().catch(() => undefined)
  }

  /**
   * The hot path: the project's entry when it can be served without waiting, else undefined (then call get()).
   * A stale entry is served while Postgres is failing to give a fresh one.
   */
  peek(teamId: number): ProjectEntry | undefined {
    const entry = this.entries.get(teamId)
    if (entry === undefined) return undefined
    if (!this.stale.has(teamId)) return entry
    const failed = this.failedAt.get(teamId)
    if (failed === undefined) return undefined
    if (Date.now() - failed >= this.retryAfterMs && !this.loading.has(teamId)) void this.load(teamId, 'retry').catch(() => undefined)
    return entry
  }

  /** The project's entry, loading it when needed; throws only when it was never loaded and cannot be. */
  async get(teamId: number): Promise<ProjectEntry> {
    const entry = this.peek(teamId)
    if (entry) return entry
    const failed = this.failedAt.get(teamId)
    if (failed !== undefined && Date.now() - failed < this.retryAfterMs && !this.loading.has(teamId)) {
      throw new Error('flags of this project could not be loaded recently')
    }
    try {
      return await this.load(teamId, 'miss')
    } catch (error) {
      const stale = this.entries.get(teamId)
      if (stale) return stale
      throw error
    }
  }

  /** Mark a project's flags changed and reload them in the background. */
  invalidate(teamId: number, reason = 'invalidate'): void {
    this.generations.set(teamId, (this.generations.get(teamId) ?? 0) + 1)
    if (!this.entries.has(teamId)) return
    this.stale.add(teamId)
    this.failedAt.delete(teamId)
    void this.load(teamId, reason).catch(() => undefined)
  }

  /** After a write by this process: the next request sees it (resolves once reloaded, or failed to). */
  async refresh(teamId: number): Promise<void> {
    this.invalidate(teamId, 'write')
    if (!this.entries.has(teamId)) return
    await this.load(teamId, 'write').catch(() => undefined)
  }

  /** A request names group types the entry does not know: reload it, at most once a second per project. */
  async refreshGroupTypes(teamId: number, names: Iterable<string>): Promise<ProjectEntry | undefined> {
    const entry = this.entries.get(teamId)
    if (!entry) return undefined
    let unknown = false
    for (const name of names) if (!entry.groupTypeIndexes.has(name)) unknown = true
    if (!unknown) return entry
    const now = Date.now()
    if (now - (this.groupTypesCheckedAt.get(teamId) ?? 0) < this.groupTypeRefreshMs) return entry
    this.groupTypesCheckedAt.set(teamId, now)
    return this.reloadGroupTypes(teamId)
  }

  /** Read the group type mapping alone (ingestion adds group types; flags are unchanged). */
  private async reloadGroupTypes(teamId: number): Promise<ProjectEntry | undefined> {
    try {
      const types = await this.source.groupTypes(teamId)
      this.options.onReload?.('ok', 'group_types')
      const current = this.entries.get(teamId)
      if (!current) return undefined
      const same = types.length === current.groupTypeNames.size && types.every(([i, n]) => current.groupTypeNames.get(i) === n)
      if (same) return current
      const next = withGroupTypes(current, types)
      this.entries.set(teamId, next)
      return next
    } catch (error) {
      this.options.onReload?.('error', 'group_types')
      this.options.onError?.(error, 'group types')
      return this.entries.get(teamId)
    }
  }

  /** Compare every cached project's version (and group type count) with Postgres; reload what changed. */
  async check(): Promise<void> {
    if (this.checking || this.entries.size === 0) return
    this.checking = true
    try {
      const stamps = await this.source.stamps([...this.entries.keys()])
      for (const s of stamps) {
        const entry = this.entries.get(s.teamId)
        if (!entry) continue
        if (entry.version !== s.version) this.invalidate(s.teamId, 'poll')
        else if (entry.groupTypeNames.size !== s.groupTypes) void this.reloadGroupTypes(s.teamId)
        else if (this.stale.has(s.teamId) && !this.loading.has(s.teamId)) void this.load(s.teamId, 'retry').catch(() => undefined)
      }
    } catch (error) {
      this.options.onError?.(error, 'version check')
    } finally {
      this.checking = false
    }
  }

  /** Projects currently cached (for tests and metrics). */
  get size(): number {
    return this.entries.size
  }

  private load(teamId: number, reason: string): Promise<ProjectEntry> {
    const generation = this.generations.get(teamId) ?? 0
    const inflight = this.loading.get(teamId)
    if (inflight && inflight.generation === generation) return inflight.promise
    const promise = (async () => {
      let data: ProjectFlags
      try {
        data = await this.source.load(teamId)
      } catch (error) {
        this.failedAt.set(teamId, Date.now())
        this.options.onReload?.('error', reason)
        throw error
      }
      this.options.onReload?.('ok', reason)
      this.failedAt.delete(teamId)
      const current = this.entries.get(teamId)
      const entry = buildEntry(teamId, data, Date.now(), current)
      // A slower, older load never replaces what a newer one put there.
      if (!current || (this.generations.get(teamId) ?? 0) === generation || current.version <= entry.version) {
        this.entries.set(teamId, entry)
      }
      if ((this.generations.get(teamId) ?? 0) === generation) this.stale.delete(teamId)
      else {
        // invalidated while loading: what was read may predate the change
        this.stale.add(teamId)
        queueMicrotask(() => void this.load(teamId, 'requeue').catch(() => undefined))
      }
      return this.entries.get(teamId)!
    })()
    const record: Loading = { generation, promise }
    this.loading.set(teamId, record)
    const done = () => {
      if (this.loading.get(teamId) === record) this.loading.delete(teamId)
    }
    promise.then(done, done)
    return promise
  }
}
