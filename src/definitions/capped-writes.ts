// The learner's definition writes within each project's caps (caps.ts): what a project at its cap would add is
// left out, what it has is still updated. Returns what was left out, so that the learner's memo can pass over it
// for the hour instead of asking again with every batch.
import type { Sql } from 'postgres'
import type { Logger } from '../log'
import type { PipelineMetrics } from '../pipeline/metrics-relay'
import { DefinitionCaps, withinRoom, type CappedKind } from './caps'
import { countPropertyDefinitions, existingPropertyKeys, propertyKey, recordPropertySightings, type PropertySighting } from './property-repository'
import { countEventDefinitions, existingEventNames, recordSightings } from './repository'
import type { DefinitionSighting } from './tracker'

const REFUSAL_LOG_INTERVAL_MS = 60_000

const PROPERTY_KIND: Record<string, CappedKind> = { event: 'event_property', person: 'person_property', group: 'group_property' }
const TABLE_TYPE: Record<Exclude<CappedKind, 'event'>, 'event' | 'person' | 'group'> = {
  event_property: 'event',
  person_property: 'person',
  group_property: 'group',
}

/** Caps counted in Postgres; refusals counted in `definitions_refused_total{kind}` and logged once a minute per project. */
export function definitionCaps(
  sql: Sql,
  limits: { events: number; properties: number },
  deps: { metrics: PipelineMetrics; log: Logger },
): DefinitionCaps {
  const loggedAt = new Map<number, number>()
  return new DefinitionCaps({
    limits: { event: limits.events, event_property: limits.properties, person_property: limits.properties, group_property: limits.properties },
    count: (teamId, kind) => (kind === 'event' ? countEventDefinitions(sql, teamId) : countPropertyDefinitions(sql, teamId, TABLE_TYPE[kind])),
    refused: (teamId, kind, howMany) => {
      deps.metrics.inc('definitionsRefused', { kind }, howMany)
      const now = Date.now()
      if (now - (loggedAt.get(teamId) ?? 0) < REFUSAL_LOG_INTERVAL_MS) return
      loggedAt.set(teamId, now)
      if (loggedAt.size > 10_000) loggedAt.delete(loggedAt.keys().next().value!)
      const limit = kind === 'event' ? limits.events : limits.properties
      deps.log.warn({ teamId, kind, refused: howMany, limit }, `definitions refused: the project has ${limit} ${kind} definitions (its cap); its events are still stored`)
    },
  })
}

/** Event definitions: the due sightings written within the caps; returns those refused. */
export async function writeEventSightings(sql: Sql, caps: DefinitionCaps | undefined, due: DefinitionSighting[]): Promise<DefinitionSighting[]> {
  if (!caps) {
    await recordSightings(sql, due)
    return []
  }
  const { free, tight } = await caps.split('event', due, (s) => s.teamId)
  await recordSightings(sql, free)
  const refused: DefinitionSighting[] = []
  for (const t of tight) {
    const existing = await existingEventNames(sql, t.teamId, t.rows.map((s) => s.name))
    const within = withinRoom(t.rows, t.room, (s) => existing.has(s.name))
    await recordSightings(sql, within.write)
    caps.settle('event', t.teamId, within.made, within.refused.length)
    refused.push(...within.refused)
  }
  return refused
}

/** Property definitions (event, person, group): written within the caps; returns those refused. */
export async function writePropertySightings(sql: Sql, caps: DefinitionCaps | undefined, rows: PropertySighting[]): Promise<PropertySighting[]> {
  if (!caps) {
    await recordPropertySightings(sql, rows)
    return []
  }
  const byKind = new Map<CappedKind, PropertySighting[]>()
  const write: PropertySighting[] = []
  for (const row of rows) {
    const kind = PROPERTY_KIND[row.kind]
    if (!kind) {
      write.push(row)
      continue
    }
    let list = byKind.get(kind)
    if (!list) byKind.set(kind, (list = []))
    list.push(row)
  }
  const refused: PropertySighting[] = []
  for (const [kind, list] of byKind) {
    const { free, tight } = await caps.split(kind, list, (s) => s.teamId)
    write.push(...free)
    for (const t of tight) {
      const existing = await existingPropertyKeys(sql, t.teamId, TABLE_TYPE[kind as Exclude<CappedKind, 'event'>], t.rows.map((s) => s.name))
      const within = withinRoom(t.rows, t.room, (s) => existing.has(propertyKey(s.groupTypeIndex, s.name)))
      write.push(...within.write)
      caps.settle(kind, t.teamId, within.made, within.refused.length)
      refused.push(...within.refused)
    }
  }
  await recordPropertySightings(sql, write)
  return refused
}
