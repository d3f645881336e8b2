// The consumer that turns landed events into what flags and admins need: event and property definitions,
// persons and their distinct ids, group types and groups. Per batch and project: one transaction, a handful of bulk
// statements, the project's persons serialised across processes by an advisory lock. Replaying a batch
// (after a crash before the cursor moved) converges to the same state. A distinct id seen with no person (an
// anonymous visitor of posthog-js at its defaults) is recorded as personless, so that the query API counts it as
// one person (see recordPersonless).
import type { Sql } from 'postgres'
import { inTransaction, isDataFault } from '../db/postgres'
import { wellFormed, wellFormedText } from '../db/text'
import type { DefinitionCaps } from '../definitions/caps'
import { writeEventSightings, writePropertySightings } from '../definitions/capped-writes'
import { recordPairSightings, type PropertySighting } from '../definitions/property-repository'
import { PropertyTracker, type LearnedPair, type LearnedProperty } from '../definitions/property-tracker'
import type { DefinitionTracker } from '../definitions/tracker'
import type { Logger } from '../log'
import type { Batch, BatchHandler } from '../pipeline/consumer'
import type { PipelineMetrics } from '../pipeline/metrics-relay'
import { allocateGroupTypes, groupTypesOf, groupUpdates, MAX_GROUP_TYPES } from './groups'
import { blockedAmong, MAX_BLOCKED_GROUP_TYPES } from './group-types-repository'
import type { PersonChange } from './person-cache'
import { notifyPersonChange } from './person-changes'
import { IdentityModel, type PersonEvent } from './identity'
import { KnownIds } from './known-ids'
import { addGroupTypes, loadGroupTypes, loadPersons, PERSONS_LOCK, recordPersonless, upsertGroups, writePersons } from './repository'

export const LEARNER = 'learn'
/** The memory of distinct ids known to have a person or a personless row (see KnownIds), in bytes. */
export const KNOWN_MAX_BYTES = 32 * 1024 * 1024
const IDENTITY_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously'])

function touchesPerson(e: PersonEvent): boolean {
  const p = e.properties
  return IDENTITY_EVENTS.has(e.event) || p.$set !== undefined || p.$set_once !== undefined || p.$unset !== undefined
}

export class Learner implements BatchHandler {
  readonly name = LEARNER
  readonly store = 'postgres'
  /** distinct ids known to have a person (their plain events need no work) or a personless row */
  private readonly known: KnownIds
  private readonly properties: PropertyTracker

  constructor(
    private readonly deps: {
      sql: Sql
      tracker: DefinitionTracker
      properties?: PropertyTracker
      /** per-project caps on definitions (none: unbounded) */
      caps?: DefinitionCaps
      metrics: PipelineMetrics
      log: Logger
      /** after each commit: what it changed, for the caches of stored properties in this process */
      onPersonsChanged?(change: PersonChange): void
      /** the bound of the memory of known distinct ids (default KNOWN_MAX_BYTES) */
      knownMaxBytes?: number
    },
  ) {
    this.properties = deps.properties ?? new PropertyTracker()
    this.known = new KnownIds(deps.knownMaxBytes ?? KNOWN_MAX_BYTES)
  }

  /** What the memory of known distinct ids holds now (it never passes its bound). */
  knownIds(): { entries: number; bytes: number } {
    return { entries: this.known.size, bytes: this.known.bytes }
  }

  async handle(batch: Batch): Promise<void> {
    const sightings = []
    const byTeam = new Map<number, PersonEvent[]>()
    const learned = this.properties.batch(Date.now())
    for (const record of batch.records) {
      let events = byTeam.get(record.projectId)
      if (!events) byTeam.set(record.projectId, (events = []))
      // what Postgres cannot store (NUL, lone surrogates) is replaced, not allowed to stall the learner; a record
      // known to hold none (nearly all) is not walked for it
      const clean = record.wellFormed === true
      for (const e of record.events) {
        const event = clean ? e.event : wellFormedText(e.event)
        const properties = clean ? e.properties : wellFormed(e.properties)
        sightings.push({ teamId: record.projectId, name: event, seenAt: record.receivedAt })
        events.push({ event, distinctId: clean ? e.distinctId : wellFormedText(e.distinctId), properties, timestamp: e.timestamp })
        learned.add(record.projectId, record.receivedAt, event, properties)
      }
    }
    const due = this.deps.tracker.due(sightings)
    const refused = await writeEventSightings(this.deps.sql, this.deps.caps, due)
    // names refused at the cap are remembered too: passed over for the hour rather than asked about every batch
    this.deps.tracker.remember(due)
    if (due.length > refused.length) this.deps.metrics.inc('personUpdates', { kind: 'definitions' }, due.length - refused.length)
    const refusedEvents = new Set(refused.map((s) => `${s.teamId}\u0000${s.name}`))
    const groupTypes = new Map<number, ReadonlyMap<string, number>>()
    for (const [teamId, events] of byTeam) {
      const types = await this.learnProject(teamId, events)
      if (types) groupTypes.set(teamId, types)
    }
    await this.learnProperties(learned.definitions(), learned.pairs(), groupTypes, refusedEvents)
  }

  /** Property definitions and (event, property) pairs; group properties need their type's index, known by now. */
  private async learnProperties(
    definitions: LearnedProperty[],
    pairs: LearnedPair[],
    groupTypes: ReadonlyMap<number, ReadonlyMap<string, number>>,
    refusedEvents: ReadonlySet<string>,
  ): Promise<void> {
    const written: LearnedProperty[] = []
    const rows: PropertySighting[] = []
    for (const d of definitions) {
      const index = d.groupType === null ? null : groupTypes.get(d.teamId)?.get(d.groupType)
      if (index === undefined) continue // a group type without an index (a sixth one): not learned
      rows.push({ teamId: d.teamId, kind: d.kind, groupTypeIndex: index, name: d.name, type: d.type })
      written.push(d)
    }
    const refused = await writePropertySightings(this.deps.sql, this.deps.caps, rows)
    // no (event, property) pair for an event or an event property refused at its project's cap
    const refusedProperties = new Set(refused.filter((r) => r.kind === 'event').map((r) => `${r.teamId}\u0000${r.name}`))
    const pairsKept = refusedEvents.size + refusedProperties.size === 0 ? pairs : pairs.filter((p) => !refusedEvents.has(`${p.teamId}\u0000${p.event}`) && !refusedProperties.has(`${p.teamId}\u0000${p.property}`))
    await recordPairSightings(this.deps.sql, pairsKept)
    // what was refused is remembered as well: passed over for the hour
    this.properties.remember(written, pairs)
    if (rows.length > refused.length) this.deps.metrics.inc('personUpdates', { kind: 'property_definitions' }, rows.length - refused.length)
    if (pairsKept.length) this.deps.metrics.inc('personUpdates', { kind: 'event_properties' }, pairsKept.length)
  }

  async probe(): Promise<boolean> {
    await this.deps.sql`select 1`
    return true
  }

  /** Postgres refused the data itself, or the data broke the code that reads it (a stack overflow, a bad type). */
  rejects(error: unknown): boolean {
    return isDataFault(error)
  }

  /**
   * Persons were erased (people/erasure.ts): their distinct ids have no person (nor personless row) any more, so
   * their next event must make one. `distinctIds` undefined: forget the whole project (or, with no project,
   * everything).
   */
  forget(teamId: number | undefined, distinctIds?: string[]): void {
    this.known.forget(teamId, distinctIds)
  }

  /** Persons, distinct ids, group types and groups of one project; the project's group types when it read them. */
  /** when refused group types were last logged, per project (once a minute: a client may name one in every event) */
  private readonly refusalLoggedAt = new Map<number, number>()

  private async learnProject(teamId: number, events: PersonEvent[]): Promise<ReadonlyMap<string, number> | undefined> {
    const personEvents = events.filter(
      (e) =>
        e.event !== '$groupidentify' &&
        e.properties.$process_person_profile !== false &&
        (touchesPerson(e) || !this.known.hasPerson(teamId, e.distinctId)),
    )
    // Ids with neither a person nor a personless row known: whatever the event (personless, an exception, a group's
    // identify), an id left with no person by this batch gets a personless row, so that every event has a person.
    const unmapped = new Set<string>()
    for (const e of events) if (!this.known.mapped(teamId, e.distinctId)) unmapped.add(e.distinctId)
    const typesSeen = events.flatMap(groupTypesOf)
    const refused = { tooLarge: 0 }
    const groupSets = groupUpdates(events, refused)
    if (personEvents.length === 0 && typesSeen.length === 0 && unmapped.size === 0) return undefined
    const { metrics } = this.deps
    let learned: string[] = []
    let personless: string[] = []
    const change: PersonChange = { teamId, distinctIds: [], groups: [] }
    let groupTypes: Map<string, number> | undefined
    await this.deps.sql.begin(async (transaction) => {
      const tx = inTransaction(transaction)
      await tx`select pg_advisory_xact_lock(${PERSONS_LOCK}, ${teamId})`
      if (typesSeen.length > 0) {
        const types = await loadGroupTypes(tx, teamId)
        // Names an admin deleted stay refused until unblocked (asked only when a slot is free). Among the first
        // MAX_BLOCKED + MAX_GROUP_TYPES new names at least five are not blocked: every free slot is taken by then.
        const unknown = types.size < MAX_GROUP_TYPES ? [...new Set(typesSeen.filter((type) => !types.has(type)))].slice(0, MAX_BLOCKED_GROUP_TYPES + MAX_GROUP_TYPES) : []
        const blocked = await blockedAmong(tx, teamId, unknown)
        const added = allocateGroupTypes(types, typesSeen, blocked)
        await addGroupTypes(tx, teamId, added)
        for (const [type, index] of added) types.set(type, index)
        const refused = new Set(typesSeen.filter((type) => !types.has(type)))
        if (refused.size > 0) {
          // every slot taken, or blocked: the admin can free one (DELETE …/groups_types/:index/) or unblock a name
          metrics.inc('personUpdates', { kind: 'group_types_refused' }, refused.size)
          if (Date.now() - (this.refusalLoggedAt.get(teamId) ?? 0) > 60_000) {
            this.refusalLoggedAt.set(teamId, Date.now())
            const names = (list: Iterable<string>) => [...list].slice(0, 5).map((t) => t.slice(0, 100))
            this.deps.log.warn({ teamId, refused: names(refused), blocked: names(blocked), taken: names(types.keys()) }, 'group types refused: blocked by an admin, or the project has five already')
          }
        }
        groupTypes = types
        const groups = groupSets
          .filter((g) => types.has(g.type))
          .map((g) => ({ index: types.get(g.type)!, key: g.key, properties: g.properties }))
        await upsertGroups(tx, teamId, groups)
        for (const g of groups) change.groups.push([g.index, g.key])
        if (added.length) metrics.inc('personUpdates', { kind: 'group_types' }, added.length)
        if (groups.length) metrics.inc('personUpdates', { kind: 'groups' }, groups.length)
      }
      if (personEvents.length > 0) {
        const ids = new Set<string>()
        for (const e of personEvents) {
          ids.add(e.distinctId)
          const p = e.properties
          if (typeof p.$anon_distinct_id === 'string') ids.add(p.$anon_distinct_id)
          if (typeof p.alias === 'string' || typeof p.alias === 'number') ids.add(String(p.alias))
        }
        const model = new IdentityModel(teamId, await loadPersons(tx, teamId, [...ids]))
        for (const e of personEvents) model.apply(e)
        refused.tooLarge += model.droppedTooLarge
        const written = await writePersons(tx, teamId, model.touched(), model.assignments())
        if (written.created) metrics.inc('personUpdates', { kind: 'persons_created' }, written.created)
        if (written.updated) metrics.inc('personUpdates', { kind: 'persons_updated' }, written.updated)
        if (written.merged) metrics.inc('personUpdates', { kind: 'persons_merged' }, written.merged)
        if (written.distinctIds) metrics.inc('personUpdates', { kind: 'distinct_ids' }, written.distinctIds)
        learned = [...ids].filter((id) => model.personOf(id) !== undefined)
        const changedIds = new Set<string>()
        for (const person of model.touched()) for (const id of person.distinctIds) changedIds.add(id)
        for (const [id] of model.assignments()) changedIds.add(id)
        change.distinctIds = [...changedIds]
      }
      if (unmapped.size > 0) {
        // after the persons: an id this batch gave a person needs no personless row
        const withPerson = new Set(learned)
        personless = [...unmapped].filter((id) => !withPerson.has(id))
        const written = await recordPersonless(tx, teamId, personless)
        if (written) metrics.inc('personUpdates', { kind: 'personless_distinct_ids' }, written)
      }
      if (refused.tooLarge) metrics.inc('personUpdates', { kind: 'properties_dropped_too_large' }, refused.tooLarge)
      // other processes' caches hear of it when this commits
      if (change.distinctIds.length || change.groups.length) await notifyPersonChange(tx, change)
    })
    this.known.addPersons(teamId, learned)
    // (an id among these may have a person this batch did not load: it is then known as mapped only, and loaded
    // when an event of it touches persons)
    this.known.addMapped(teamId, personless)
    if (change.distinctIds.length || change.groups.length) this.deps.onPersonsChanged?.(change)
    return groupTypes
  }
}
