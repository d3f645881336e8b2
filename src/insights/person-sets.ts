// Person and cohort filters of an insight: the persons they hold, found in Postgres (where persons live) and handed
// to the event query as a list of person ids. Each filter is a cohort of one condition to the cohort engine, so it
// means what it means for flags and cohorts; one scan of the project's persons answers every filter of a query.
// Bounded twice: at most DYNAMIC_MEMBERS_SCAN_LIMIT persons are read, and a filter may hold at most MAX_PERSONS
// (the event query carries them as text); past either, the filter is refused by name.
import type { Sql } from 'postgres'
import { cohortDefinitions, personsWithMemberships } from '../cohorts/repository'
import { DYNAMIC_MEMBERS_SCAN_LIMIT } from '../cohorts/service'
import { personPropertyText } from '../people/repository'
import { CohortSet, inCohort, UnsupportedCohortFilter } from '../flags/engine'
import { unsupported } from './hogql'
import type { PropertyFilter } from './model'

/** Persons one person or cohort filter may hold. */
export const MAX_PERSONS = 4_000
const SCAN_CHUNK = 1_000

export interface PersonFilterAt {
  filter: PropertyFilter
  attr: string
}

export class PersonSets {
  constructor(
    private readonly sql: Sql,
    /** told of each scan of a project's persons */
    private readonly onScan: () => void = () => {},
  ) {}

  /** `key` of each of these persons (uuids) now: text, or null when absent (or the person is gone). */
  async propertyOf(teamId: number, uuids: readonly string[], key: string): Promise<Map<string, string | null>> {
    const out = new Map<string, string | null>()
    for (let at = 0; at < uuids.length; at += LOOKUP_CHUNK) {
      for (const row of await personPropertyText(this.sql, teamId, uuids.slice(at, at + LOOKUP_CHUNK), key)) out.set(row.uuid, row.value)
    }
    return out
  }

  /** The name of the project's group type at `index` (null: the project has none there). */
  async groupTypeName(teamId: number, index: number): Promise<string | null> {
    const rows = await this.sql<{ group_type: string }[]>`
      select group_type from group_type_mappings where team_id = ${teamId} and group_type_index = ${index}`
    return rows[0]?.group_type ?? null
  }

  /** `key` of each of these groups (of one type) now: text, or null when absent (or the group was never identified). */
  async groupPropertyOf(teamId: number, index: number, groupKeys: readonly string[], key: string): Promise<Map<string, string | null>> {
    const out = new Map<string, string | null>()
    for (let at = 0; at < groupKeys.length; at += LOOKUP_CHUNK) {
      const rows = await this.sql<{ group_key: string; value: string | null }[]>`
        select group_key, group_properties ->> ${key} as value from groups
         where team_id = ${teamId} and group_type_index = ${index} and group_key = any(${groupKeys.slice(at, at + LOOKUP_CHUNK) as string[]}::text[])`
      for (const row of rows) out.set(row.group_key, row.value)
    }
    return out
  }

  /** The person ids (uuids) of each filter. */
  async resolve(teamId: number, filters: readonly PersonFilterAt[]): Promise<Map<PropertyFilter, string[]>> {
    const out = new Map<PropertyFilter, string[]>()
    if (filters.length === 0) return out
    this.onScan()
    const stored = await cohortDefinitions(this.sql, teamId)
    // each filter a cohort of its own, numbered below every real cohort
    const synthetic = filters.map(({ filter }, i) => ({
      id: -1 - i,
      is_static: false,
      filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [cohortFilterOf(filter)] }] } },
    }))
    const set = new CohortSet([...stored, ...synthetic])
    const ids = filters.map(() => [] as string[])
    const now = new Date()
    let after = 0
    for (let scanned = 0; scanned < DYNAMIC_MEMBERS_SCAN_LIMIT; scanned += SCAN_CHUNK) {
      const persons = await personsWithMemberships(this.sql, teamId, after, SCAN_CHUNK)
      if (persons.length === 0) break
      for (const p of persons) {
        const source = { overrides: {}, stored: p.properties, memberships: new Set(p.cohorts), now }
        filters.forEach(({ filter, attr }, i) => {
          let member = false
          try {
            member = inCohort(-1 - i, set, source)
          } catch (error) {
            if (error instanceof UnsupportedCohortFilter) unsupported('Behavioural cohorts cannot filter insights yet', attr)
            throw error
          }
          if (!member) return
          if (ids[i].length >= MAX_PERSONS) unsupported(`This filter holds more than ${MAX_PERSONS} persons: filter on event properties instead`, attr)
          ids[i].push(p.uuid)
        })
      }
      after = persons[persons.length - 1].id
      if (persons.length < SCAN_CHUNK) break
      if (scanned + SCAN_CHUNK >= DYNAMIC_MEMBERS_SCAN_LIMIT) unsupported(`The project has more than ${DYNAMIC_MEMBERS_SCAN_LIMIT} persons: person and cohort filters need fewer`, filters[0].attr)
    }
    filters.forEach(({ filter }, i) => out.set(filter, ids[i]))
    return out
  }
}

/** Persons a person-property breakdown may read the property of. */
export const MAX_BREAKDOWN_PERSONS = 50_000
const LOOKUP_CHUNK = 5_000

/** An insight's person or cohort filter as a cohort's filter. */
function cohortFilterOf(filter: PropertyFilter): Record<string, unknown> {
  if (filter.type === 'person') return { key: filter.key, value: filter.value, operator: filter.operator ?? 'exact', type: 'person' }
  return { key: 'id', value: Number(filter.value), type: 'cohort', negation: filter.operator === 'not_in' }
}
