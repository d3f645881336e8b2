// The flag REST API and local_evaluation, behind the routes: validate, write, refresh this process's cache.
import { NUMERIC_ID } from '../http/fields'
import type { Sql } from 'postgres'
import { ApiError, databaseWork, errors } from '../http/errors'
import type { FlagCache } from './cache'
import { localEvaluationOf, type LocalEvaluation } from './local-evaluation'
import { flagListing, safeInt } from './reference-checks'
import { checkProjectBudget, flagBytes, measure, referencesIn, type ProjectLimit } from './project-budget'
import { cohortBytes, cohortsWithNested, disabledFlags, flagFootprints, flagRefs, type FlagRef } from './references'
import { createFlag, getFlag, getFlagByKey, keyTaken, listFlags, updateFlag, withProjectWriteLock, type ListOptions } from './repository'
import { flagJson, type FlagRow } from './serialize'
import { validateFlagBody, type FlagInput, type ValidationContext, type WriteMethod } from './validation'

const db = <T>(fn: () => Promise<T>): Promise<T> =>
  databaseWork(fn, () => errors.validation('unique', 'There is already a feature flag with this key.', 'key'))

/** If-None-Match (strong `"x"`, weak `W/"x"`, bare `x`, lists, `*`) against an entity tag. */
export function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false
  for (const part of ifNoneMatch.split(',')) {
    let tag = part.trim()
    if (tag === '*') return true
    if (tag.startsWith('W/')) tag = tag.slice(2)
    if (tag.length >= 2 && tag.startsWith('"') && tag.endsWith('"')) tag = tag.slice(1, -1)
    if (tag === etag) return true
  }
  return false
}

/** A check another capability adds to every flag PATCH/PUT (inside the write transaction): throws to refuse it. */
export type FlagUpdateCheck = (tx: Sql, teamId: number, existing: FlagRow, input: FlagInput) => Promise<void>

export class FlagService {
  private readonly updateChecks: FlagUpdateCheck[] = []

  constructor(
    private readonly deps: {
      sql: Sql
      cache: FlagCache
      notify: boolean
      /** a write refused by the project's budget (project-budget.ts), by the limit it would pass */
      onBudgetRefused?: (limit: ProjectLimit) => void
    },
  ) {}

  list(teamId: number, options: ListOptions) {
    return db(async () => {
      const { count, rows } = await listFlags(this.deps.sql, teamId, options)
      return { count, results: rows.map(flagJson) }
    })
  }

  retrieve(teamId: number, id: string) {
    return db(async () => {
      const row = NUMERIC_ID.test(id) ? await getFlag(this.deps.sql, teamId, Number(id)) : null
      if (!row) throw errors.notFound()
      return flagJson(row)
    })
  }

  /** What cohort and dependency filters are checked against. */
  private references(tx: Sql, teamId: number): ValidationContext['references'] {
    return async (want) => {
      const cohorts = await cohortsWithNested(tx, teamId, want.cohortIds)
      const flags = want.flags ? await flagRefs(tx, teamId) : []
      return { cohorts, flags }
    }
  }

  /**
   * PostHog's guards around dependencies: a flag that active flags depend on cannot be deleted or disabled, and a
   * flag that depends on disabled flags cannot be enabled.
   */
  private async checkDependents(tx: Sql, teamId: number, existing: FlagRow, input: FlagInput): Promise<void> {
    const deleting = input.deleted === true
    const disabling = input.active === false && existing.active
    if (deleting || disabling) {
      const refs = await flagRefs(tx, teamId)
      // a cycle stored before writes were serialised (or by hand) must stay breakable: flags on a cycle with this
      // one do not hold it
      const onCycle = dependenciesOf(existing.id, refs)
      const dependents = refs
        .filter((f) => f.active && f.id !== existing.id && !onCycle.has(f.id) && f.dependencies.some((d) => (typeof d === 'string' ? d : JSON.stringify(d)) === String(existing.id)))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id - b.id))
      if (dependents.length > 0) {
        const action = deleting ? 'delete' : 'disable'
        throw errors.validation(
          'invalid_input',
          `Cannot ${action} this feature flag because other flags depend on it: ${flagListing(dependents)}. Please update or ${action} the dependent flags first.`,
        )
      }
    }
    if (input.active === true && !existing.active) {
      const ids: number[] = []
      const groups = (existing.filters as { groups?: unknown })?.groups
      for (const group of Array.isArray(groups) ? groups : []) {
        for (const p of Array.isArray(group?.properties) ? group.properties : []) {
          const id = p?.type === 'flag' ? safeInt(p.key) : null
          if (id !== null && Math.abs(id) <= 2_147_483_647) ids.push(id)
        }
      }
      const disabled = await disabledFlags(tx, teamId, ids)
      if (disabled.length > 0) {
        throw errors.validation(
          'invalid_input',
          `Cannot enable this feature flag because it depends on disabled flags: ${flagListing(disabled)}. Please enable the dependency flags first.`,
        )
      }
    }
  }

  /**
   * Checks and write run in one transaction under the project's write lock (flags and cohorts alike), so two
   * concurrent writes cannot both pass checks that only one of them may pass (a dependency cycle, a dependency on
   * a flag being deleted); the answer is the row as this transaction wrote it.
   */
  create(teamId: number, userId: number, body: unknown) {
    return this.inWriteTransaction(teamId, (tx) => this.createIn(tx, teamId, userId, body))
  }

  update(teamId: number, id: string, userId: number, body: unknown, method: Exclude<WriteMethod, 'POST'>) {
    if (!NUMERIC_ID.test(id)) return Promise.reject(errors.notFound())
    return this.inWriteTransaction(teamId, (tx) => this.updateIn(tx, teamId, Number(id), userId, body, method))
  }

  /**
   * `work` in one transaction under the project's flag-and-cohort write lock; this process's cache is refreshed
   * after the commit. Another capability that writes a flag with rows of its own (an experiment) writes both here,
   * through createIn / updateIn, so the flag and its owner commit or fail together.
   */
  inWriteTransaction<T>(teamId: number, work: (tx: Sql) => Promise<T>): Promise<T> {
    return db(async () => {
      const result = await withProjectWriteLock(this.deps.sql, teamId, work)
      await this.deps.cache.refresh(teamId)
      return result
    })
  }

  /** Run `check` on every flag update from now on (an experiment refuses new variants for its launched flag). */
  addUpdateCheck(check: FlagUpdateCheck): void {
    this.updateChecks.push(check)
  }

  /** A flag of the project by key (not deleted), read inside the caller's transaction. */
  flagByKey(tx: Sql, teamId: number, key: string): Promise<FlagRow | null> {
    return getFlagByKey(tx, teamId, key)
  }

  /**
   * Checks and write run in one transaction under the project's write lock (flags and cohorts alike), so two
   * concurrent writes cannot both pass checks that only one of them may pass (a dependency cycle, a dependency on
   * a flag being deleted); the answer is the row as this transaction wrote it. `tx` holds the lock.
   */
  async createIn(tx: Sql, teamId: number, userId: number, body: unknown) {
    const input = await validateFlagBody(body, {
      method: 'POST',
      keyTaken: (key) => keyTaken(tx, teamId, key, null),
      references: this.references(tx, teamId),
    })
    await checkFlagBudget(tx, teamId, { id: null, key: input.key!, name: input.name ?? '', filters: input.filters ?? {}, deleted: input.deleted ?? false }, this.deps.onBudgetRefused)
    return flagJson(await createFlag(tx, teamId, userId, { ...input, key: input.key! }, this.deps.notify))
  }

  /** A PATCH or PUT of flag `id`; `tx` holds the project's write lock (inWriteTransaction). */
  async updateIn(tx: Sql, teamId: number, id: number, userId: number, body: unknown, method: Exclude<WriteMethod, 'POST'>) {
    const existing = await getFlag(tx, teamId, id)
    if (!existing) throw errors.notFound()
    const input = await validateFlagBody(body, {
      method,
      keyTaken: (key) => keyTaken(tx, teamId, key, existing.id),
      currentKey: existing.key,
      references: this.references(tx, teamId),
    })
    await this.checkDependents(tx, teamId, existing, input)
    for (const check of this.updateChecks) await check(tx, teamId, existing, input)
    // Bringing a flag back (deleted: false) needs its key to be free again.
    if (input.deleted === false && existing.deleted && input.key === undefined && (await keyTaken(tx, teamId, existing.key, existing.id))) {
      throw errors.validation('unique', 'There is already a feature flag with this key.', 'key')
    }
    if (input.filters !== undefined || input.key !== undefined || input.name !== undefined || input.deleted !== undefined) {
      const deleted = input.deleted ?? existing.deleted
      const written = { id: existing.id, key: input.key ?? existing.key, name: input.name ?? existing.name, filters: input.filters ?? existing.filters, deleted }
      await checkFlagBudget(tx, teamId, written, this.deps.onBudgetRefused)
    }
    const row = await updateFlag(tx, teamId, existing.id, userId, input, this.deps.notify)
    if (!row) throw errors.notFound()
    return flagJson(row)
  }

  /** local_evaluation from the cache (fresh within FLAG_REFRESH_INTERVAL_MS, at once after a local write). */
  async localEvaluation(teamId: number, sendCohorts: boolean): Promise<LocalEvaluation> {
    try {
      return localEvaluationOf(await this.deps.cache.get(teamId), sendCohorts)
    } catch (error) {
      if (error instanceof ApiError) throw error
      throw errors.databaseUnavailable()
    }
  }
}

/** Every flag `id` reaches through its dependencies (by id), itself excluded unless it is on a cycle. */
function dependenciesOf(id: number, refs: readonly FlagRef[]): Set<number> {
  const byId = new Map(refs.map((f) => [f.id, f]))
  const reached = new Set<number>()
  const stack = [id]
  while (stack.length > 0) {
    for (const d of byId.get(stack.pop()!)?.dependencies ?? []) {
      const next = safeInt(d)
      if (next !== null && !reached.has(next)) {
        reached.add(next)
        stack.push(next)
      }
    }
  }
  return reached
}

/** The project's footprint and dependency depth after this write, checked against before (project-budget.ts). */
export async function checkFlagBudget(
  tx: Sql,
  teamId: number,
  written: { id: number | null; key: string; name: string; filters: unknown; deleted: boolean },
  onRefused?: (limit: ProjectLimit) => void,
): Promise<void> {
  const stored = await flagFootprints(tx, teamId)
  const cohorts = await cohortBytes(tx, teamId)
  const before = measure(stored, cohorts, written.id)
  const others = stored.filter((f) => f.id !== written.id)
  const self = { id: written.id ?? -1, key: written.key, bytes: flagBytes(written), dependencies: referencesIn(written.filters) }
  const after = written.deleted ? measure(others, cohorts) : measure([...others, self], cohorts, self.id)
  checkProjectBudget(before, after, onRefused)
}
