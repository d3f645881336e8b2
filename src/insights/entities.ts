// What a series, funnel step or retention entity counts: an event (EventsNode, `type: "events"`), or an action
// (ActionsNode, `type: "actions"`): the events matching any of its steps. Both become one HogQL condition through the
// same layer; an action's steps are read from Postgres by the lookup the composition root hands the service.
import { errors } from '../http/errors'
import { isEvent } from './hogql'
import type { Properties } from './model'
import type { Static } from 'elysia'

type PropertiesInput = Static<typeof Properties> | undefined

/** A series or funnel step: an EventsNode (`event`) or an ActionsNode (`id`). */
export interface EntityRef {
  kind: 'EventsNode' | 'ActionsNode'
  event?: string | null
  id?: string | number | null
}

/** The events a node counts (null: every event), and the id, type and name its answer carries. */
export interface EntityMatch {
  id: string | number | null
  type: 'events' | 'actions'
  name: string
  condition: string | null
}

/** Actions as insights read them (src/actions/ implements it). */
export interface ActionLookup {
  /**
   * The project's action `id`: its name and its steps as one condition, step property filters compiled by
   * `properties` (refusals named under `attr`); null when the project has no such action.
   */
  condition(teamId: number, id: number, properties: (input: PropertiesInput, attr: string) => Promise<string | null>, attr: string): Promise<{ name: string; condition: string } | null>
}

/** A retention entity ({id, type}: `id` an event name, or an action's id with `type: "actions"`) as a node. */
export function retentionRef(entity: { id?: string | number | null; type?: string | null }, attr: string): EntityRef {
  if (entity.type === 'actions') return { kind: 'ActionsNode', id: entity.id }
  if (typeof entity.id === 'number') throw errors.validation('invalid_input', 'A numeric id names an action: send "type": "actions" (or the event name as a string)', `${attr}__type`)
  return { kind: 'EventsNode', event: entity.id ?? null }
}

/** The action id a node names, or null when it names an event. */
function actionIdOf(node: EntityRef, attr: string): number | null {
  if (node.kind !== 'ActionsNode') return null
  const id = typeof node.id === 'string' && /^\d{1,9}$/.test(node.id) ? Number(node.id) : node.id
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > 2_147_483_647) throw errors.validation('invalid_input', 'An action is named by its numeric id', `${attr}__id`)
  return id
}

/**
 * A resolver of nodes for one query: each action read and compiled once however often the query names it (a
 * series and a funnel step alike), its refusals named by where it was first met.
 */
export function entityResolver(
  teamId: number,
  actions: ActionLookup | undefined,
  properties: (input: PropertiesInput, attr: string) => Promise<string | null>,
): (node: EntityRef, attr: string) => Promise<EntityMatch> {
  const seen = new Map<number, Promise<{ name: string; condition: string }>>()
  return async (node, attr) => {
    const id = actionIdOf(node, attr)
    if (id === null) {
      const event = node.event ?? null
      return { id: event, type: 'events', name: event ?? 'All events', condition: isEvent(event) }
    }
    if (!actions) throw errors.validation('unsupported', 'Actions are not available here', attr)
    let found = seen.get(id)
    if (!found) {
      found = actions.condition(teamId, id, properties, attr).then((action) => {
        if (!action) throw errors.notFound(`This project has no action with id ${id} (${attr})`)
        return action
      })
      seen.set(id, found)
    }
    const action = await found
    return { id, type: 'actions', name: action.name, condition: action.condition }
  }
}
