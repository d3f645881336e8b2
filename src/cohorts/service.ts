// The cohorts REST API behind the routes: validate, write, refresh this process's flag cache (which holds the
// cohorts flags use). Never sees the HTTP context.
import type { Sql } from 'postgres'
import { databaseWork, errors } from '../http/errors'
import { NUMERIC_ID } from '../http/fields'
import type { FlagCache } from '../flags/cache'
import { CohortSet, inCohort, MAX_COHORT_DEPTH, UnsupportedCohortFilter } from '../flags/engine'
import { nestedIds } from '../flags/reference-checks'
import { withProjectWriteLock } from '../flags/repository'
import { checkProjectBudget, measure } from '../flags/project-budget'
import { cohortBytes, flagFootprints } from '../flags/references'
import type { PersonListing } from '../people/repository'
import { readCsvIds } from './csv'
import {
  activeFlagCohorts,
  addMembers,
  addMembersFromCsv,
  cohortDefinitions,
  cohortGraph,
  createCohort,
  getCohort,
  listCohorts,
  listMembers,
  personsWithMemberships,
  removeMember,
  updateCohort,
  storeDynamicCount,
  type CohortListOptions,
  type CohortNode,
  type CohortRow,
} from './repository'
import { cohortJson } from './serialize'
import { LIST_PAGE_MAX_BYTES } from '../http/pagination'
import { COHORT_LIMITS, personUuids, validateCohortBody, type CohortInput } from './validation'

/** How many persons one page of a dynamic cohort's members, or its size, may look at (it is evaluated, not precalculated). */
export const DYNAMIC_MEMBERS_SCAN_LIMIT = 100_000
const SCAN_CHUNK = 1000

/** The answer to a CSV upload says which of its ids named no person (they were skipped). */
function withSkipped<T extends object>(cohort: T, skipped: { count: number; ids: string[] } | null): T & { csv_skipped?: { count: number; ids: string[] } } {
  return skipped ? { ...cohort, csv_skipped: skipped } : cohort
}

const db = <T>(fn: () => Promise<T>): Promise<T> => databaseWork(fn)

function invalid(detail: string, code = 'invalid_input', attr: string | null = null): never {
  throw errors.validation(code, detail, attr)
}

/** Cohorts reachable from these ids through nested cohort filters (the ids included). */
function closure(ids: Iterable<number>, graph: ReadonlyMap<number, Pick<CohortNode, 'nested'>>): Set<number> {
  const seen = new Set<number>()
  const stack = [...ids]
  while (stack.length > 0) {
    const id = stack.pop()!
    if (seen.has(id)) continue
    seen.add(id)
    for (const n of graph.get(id)?.nested ?? []) stack.push(n)
  }
  return seen
}

export class CohortService {
  /** dynamic cohorts being sized now, by project and cohort */
  private readonly sizing = new Map<string, Promise<number | null>>()

  constructor(
    private readonly deps: {
      sql: Sql
      cache: FlagCache
      notify: boolean
      /** static members changed: the /decide person caches (which hold each person's cohorts) must forget the project's */
      onMembersChanged?(teamId: number): Promise<void>
      /** told of each scan made to size a dynamic cohort */
      onSizeScan?(): void
    },
  ) {}

  private async membersChanged(teamId: number): Promise<void> {
    await this.deps.onMembersChanged?.(teamId)
  }

  list(teamId: number, options: CohortListOptions) {
    return db(async () => {
      const { count, rows } = await listCohorts(this.deps.sql, teamId, options)
      return { count, results: rows.map(cohortJson) }
    })
  }

  private async existing(teamId: number, id: string): Promise<CohortRow> {
    const row = NUMERIC_ID.test(id) ? await getCohort(this.deps.sql, teamId, Number(id)) : null
    if (!row) throw errors.notFound()
    return row
  }

  /** One cohort; a dynamic one with its size now (computed here, bounded by DYNAMIC_MEMBERS_SCAN_LIMIT). */
  retrieve(teamId: number, id: string) {
    return db(async () => {
      const row = await this.existing(teamId, id)
      if (row.is_static || row.deleted) return cohortJson(row)
      return cohortJson({ ...row, count: await this.dynamicCount(teamId, row.id) })
    })
  }

  /**
   * Checks and write run in one transaction under the project's write lock (the one flag writes take): a nested id
   * must name a cohort of the project, the nesting stays within MAX_COHORT_DEPTH, and no loop forms, on POST as on
   * PATCH.
   */
  create(teamId: number, userId: number, body: unknown, csv: Uint8Array | null) {
    return db(async () => {
      const input = validateCohortBody(body, 'POST', null)
      // the upload is read before anything is written: a bad file creates no cohort
      const upload = csv && input.is_static ? await readCsvIds(csv) : null
      const id = await withProjectWriteLock(this.deps.sql, teamId, async (tx) => {
        const graph = await cohortGraph(tx, teamId)
        checkNesting(graph, null, nestedIds(input.filters ?? null))
        await checkCohortBudget(tx, teamId, null, input.deleted ? null : (input.filters ?? null))
        return createCohort(tx, teamId, userId, input, this.deps.notify)
      })
      const skipped = upload ? await addMembersFromCsv(this.deps.sql, teamId, id, upload.kind, upload.ids) : null
      if (input.is_static) await this.membersChanged(teamId)
      await this.deps.cache.refresh(teamId)
      return withSkipped(cohortJson((await getCohort(this.deps.sql, teamId, id))!), skipped)
    })
  }

  update(teamId: number, id: string, body: unknown, csv: Uint8Array | null) {
    return db(async () => {
      const before = await this.existing(teamId, id)
      const input = validateCohortBody(body, 'PATCH', before)
      const isStatic = input.is_static ?? before.is_static
      const upload = csv && isStatic && !(input.deleted ?? before.deleted) ? await readCsvIds(csv) : null
      const written = await withProjectWriteLock(this.deps.sql, teamId, async (tx) => {
        // read again under the lock: what the checks compare against is what the write replaces
        const existing = await getCohort(tx, teamId, before.id)
        if (!existing) throw errors.notFound()
        await this.checkUpdate(tx, teamId, existing, input)
        if (!(await updateCohort(tx, teamId, existing.id, input, this.deps.notify))) throw errors.notFound()
        return (await getCohort(tx, teamId, existing.id))!
      })
      const skipped = upload ? await addMembersFromCsv(this.deps.sql, teamId, written.id, upload.kind, upload.ids) : null
      if (upload || input.deleted !== undefined || input.is_static !== undefined) await this.membersChanged(teamId)
      await this.deps.cache.refresh(teamId)
      return withSkipped(cohortJson(upload ? (await getCohort(this.deps.sql, teamId, written.id))! : written), skipped)
    })
  }

  /**
   * PostHog's update rules, checked under the project's write lock: behavioural filters stay out of cohorts flags use;
   * a cohort an active flag uses (directly or through another cohort) cannot be deleted; no loop of nested cohorts.
   */
  private async checkUpdate(tx: Sql, teamId: number, existing: CohortRow, input: CohortInput): Promise<void> {
    const [graph, flags] = await Promise.all([cohortGraph(tx, teamId), activeFlagCohorts(tx, teamId)])
    const usedBy = flags.filter((f) => closure(f.cohorts, graph).has(existing.id))
    const filters = input.filters === undefined ? existing.filters : input.filters
    const nested = nestedIds(filters)
    if (input.filters !== undefined && input.filters !== null && usedBy.length > 0) {
      if (nestedHasBehavioural(input.filters)) {
        invalid('Behavioral filters cannot be added to cohorts used in feature flags.', 'behavioral_cohort_found', 'filters')
      }
      for (const n of nested) {
        for (const dependency of closure([n], graph)) {
          const node = graph.get(dependency)
          if (node?.behavioral) {
            invalid(`A cohort dependency (${node.name ?? 'None'}) has filters based on events. These cohorts can't be used in feature flags.`, 'behavioral_cohort_found', 'filters')
          }
        }
      }
    }
    if (input.deleted === true && !existing.deleted && usedBy.length > 0) {
      invalid(
        `This cohort is used in ${usedBy.length} active feature flag(s): ${usedBy.map((f) => f.name || f.key).join(', ')}. Please remove the cohort from these feature flags before deleting it.`,
      )
    }
    checkNesting(graph, existing.id, nested)
    const deleted = input.deleted ?? existing.deleted
    if (input.filters !== undefined || input.deleted !== undefined) await checkCohortBudget(tx, teamId, existing.id, deleted ? null : filters)
  }

  /**
   * A page of members: a static cohort's stored members, a dynamic cohort's persons that match it now. `cut`: the
   * page stopped short of `limit` at its byte budget (the next page starts right after it).
   */
  persons(teamId: number, id: string, limit: number, offset: number, maxBytes = LIST_PAGE_MAX_BYTES): Promise<{ rows: PersonListing[]; cut: boolean }> {
    return db(async () => {
      const cohort = await this.existing(teamId, id)
      if (cohort.is_static) return listMembers(this.deps.sql, cohort.id, limit, offset, maxBytes)
      return this.dynamicMembers(teamId, cohort.id, limit, offset, maxBytes)
    })
  }

  /**
   * The persons matching a dynamic cohort now, in id order, looking at no more than DYNAMIC_MEMBERS_SCAN_LIMIT
   * persons; `scan.complete` turns true once every person of the project was looked at.
   */
  private async *dynamicMatches(teamId: number, cohortId: number, scan: { complete: boolean }): AsyncGenerator<PersonListing & { cohorts: number[] }> {
    const set = new CohortSet(await cohortDefinitions(this.deps.sql, teamId))
    const now = new Date()
    let after = 0
    for (let scanned = 0; scanned < DYNAMIC_MEMBERS_SCAN_LIMIT; scanned += SCAN_CHUNK) {
      const persons = await personsWithMemberships(this.deps.sql, teamId, after, SCAN_CHUNK)
      if (persons.length === 0) {
        scan.complete = true
        return
      }
      for (const p of persons) {
        let member = false
        try {
          member = inCohort(cohortId, set, { overrides: {}, stored: p.properties, memberships: new Set(p.cohorts), now })
        } catch (error) {
          if (!(error instanceof UnsupportedCohortFilter)) throw error
        }
        if (member) yield p
      }
      after = persons[persons.length - 1].id
    }
  }

  private async dynamicMembers(teamId: number, cohortId: number, limit: number, offset: number, maxBytes: number): Promise<{ rows: PersonListing[]; cut: boolean }> {
    const out: PersonListing[] = []
    let skipped = 0
    let bytes = 0
    for await (const p of this.dynamicMatches(teamId, cohortId, { complete: false })) {
      if (skipped < offset) {
        skipped++
        continue
      }
      // the same measure as a stored page's (people/repository.ts personListingBytes)
      bytes += JSON.stringify(p.properties).length + p.distinct_ids.reduce((n, d) => n + d.length + 4, 0) + 200
      if (out.length > 0 && bytes > maxBytes) return { rows: out, cut: true }
      out.push(p)
      if (out.length >= limit) break
    }
    return { rows: out, cut: false }
  }

  /**
   * A dynamic cohort's size now (as PostHog's count after a calculation), stored as its count so that the list
   * shows the last size known; null when the project has more persons than one scan looks at.
   */
  private dynamicCount(teamId: number, cohortId: number): Promise<number | null> {
    // reads of one cohort at once share one scan: a dashboard polling it costs one scan at a time, not one a read
    const key = `${teamId}:${cohortId}`
    const running = this.sizing.get(key)
    if (running) return running
    const sizing = this.scanCount(teamId, cohortId).finally(() => this.sizing.delete(key))
    this.sizing.set(key, sizing)
    return sizing
  }

  private async scanCount(teamId: number, cohortId: number): Promise<number | null> {
    this.deps.onSizeScan?.()
    const scan = { complete: false }
    let count = 0
    for await (const _ of this.dynamicMatches(teamId, cohortId, scan)) count++
    if (!scan.complete) return null
    await storeDynamicCount(this.deps.sql, cohortId, count)
    return count
  }

  addPersons(teamId: number, id: string, body: unknown) {
    return db(async () => {
      const cohort = await this.existing(teamId, id)
      if (!cohort.is_static) invalid('Can only add users to static cohorts')
      const ids = (body as Record<string, unknown> | null)?.person_ids
      if (!Array.isArray(ids)) invalid('person_ids must be a list')
      if (ids.length === 0) invalid('person_ids cannot be empty')
      if (ids.length > COHORT_LIMITS.addPersons) invalid('List size exceeds limit')
      const uuids = personUuids(ids)
      const matched = uuids.length === 0 ? 0 : await addMembers(this.deps.sql, teamId, cohort.id, uuids)
      if (matched === 0) invalid('No valid users to add to cohort')
      await this.membersChanged(teamId)
      return { success: true }
    })
  }

  removePerson(teamId: number, id: string, body: unknown) {
    return db(async () => {
      const cohort = await this.existing(teamId, id)
      if (!cohort.is_static) invalid('Can only remove users from static cohorts')
      const personId = (body as Record<string, unknown> | null)?.person_id
      if (!personId) invalid('person_id is required')
      if (typeof personId !== 'string') invalid('person_id must be a string')
      const [uuid] = personUuids([personId])
      if (!uuid) invalid('person_id must be a valid UUID')
      const outcome = await removeMember(this.deps.sql, teamId, cohort.id, uuid)
      if (outcome === 'no_person') throw errors.notFound("Person with this UUID does not exist in the cohort's team")
      if (outcome === 'not_member') throw errors.notFound('Person is not part of the cohort')
      await this.membersChanged(teamId)
      return { success: true }
    })
  }
}

/**
 * PostHog's will_create_loops, on POST as on PATCH: every nested id names a cohort of the project and no loop forms
 * through the cohort being written (`id`; null for a new one, whose id nothing can name yet). Then the nesting
 * depth: /decide evaluates at most MAX_COHORT_DEPTH cohorts inside one another, so no chain of nested cohorts through
 * this one may be longer (a flag on its top would be false for everyone, silently).
 */
function checkNesting(graph: ReadonlyMap<number, Pick<CohortNode, 'nested'>>, id: number | null, nested: number[]): void {
  const self = id ?? -1
  const childrenOf = (n: number): number[] => (n === self ? nested : (graph.get(n)?.nested ?? []))
  const onPath = new Set<number>()
  const seen = new Set<number>()
  const visit = (at: number): boolean => {
    seen.add(at)
    onPath.add(at)
    for (const child of childrenOf(at)) {
      if (onPath.has(child)) return true
      if (seen.has(child)) continue
      if (!graph.has(child)) invalid('Invalid Cohort ID in filter')
      if (visit(child)) return true
    }
    onPath.delete(at)
    return false
  }
  if (visit(self)) invalid('Cohorts cannot reference other cohorts in a loop.')
  // longest chain below this cohort (itself counted) and above it; a loop stored elsewhere long ago is cut where it closes
  const longestFrom = (start: number, next: (n: number) => readonly number[]): number => {
    const memo = new Map<number, number>()
    const visiting = new Set<number>()
    const walk = (at: number): number => {
      const known = memo.get(at)
      if (known !== undefined) return known
      if (visiting.has(at)) return 0
      visiting.add(at)
      let deepest = 0
      for (const n of next(at)) if (graph.has(n) || n === self) deepest = Math.max(deepest, walk(n))
      visiting.delete(at)
      memo.set(at, deepest + 1)
      return deepest + 1
    }
    return walk(start)
  }
  const parents = new Map<number, number[]>()
  for (const [n, node] of graph) {
    if (n === self) continue
    for (const child of node.nested) parents.set(child, [...(parents.get(child) ?? []), n])
  }
  const longest = longestFrom(self, childrenOf) + (id === null ? 0 : longestFrom(self, (n) => parents.get(n) ?? []) - 1)
  if (longest > MAX_COHORT_DEPTH) {
    invalid(`Cohorts may be nested at most ${MAX_COHORT_DEPTH} deep (a cohort in a cohort in a cohort …); this one would make a chain of ${longest}.`, 'limit_exceeded', 'filters')
  }
}

/** The project's footprint (flags and cohorts, project-budget.ts) with this cohort's new filters (null: deleted). */
async function checkCohortBudget(tx: Sql, teamId: number, id: number | null, filters: unknown): Promise<void> {
  const flags = await flagFootprints(tx, teamId)
  const others = await cohortBytes(tx, teamId, id)
  const current = id === null ? 0 : (await cohortBytes(tx, teamId)) - others
  const written = filters === null || filters === undefined ? 0 : Buffer.byteLength(JSON.stringify(filters))
  checkProjectBudget(measure(flags, others + current), measure(flags, others + written))
}

function nestedHasBehavioural(node: unknown, depth = 0): boolean {
  if (depth > 64 || node === null || typeof node !== 'object') return false
  if (!Array.isArray(node) && (node as Record<string, unknown>).type === 'behavioral') return true
  return Object.values(node).some((v) => nestedHasBehavioural(v, depth + 1))
}
