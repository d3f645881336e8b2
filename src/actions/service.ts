// The actions REST API behind the routes (validate, check the name is free, write, answer PostHog's shape), and the
// lookup insights use to turn an ActionsNode into a condition. Never sees the HTTP context.
import type { Sql } from 'postgres'
import { databaseWork, errors } from '../http/errors'
import { NUMERIC_ID } from '../http/fields'
import { isoDate } from '../http/format'
import { propertiesCondition } from '../insights/filters'
import { actionCondition, type PropertiesCompiler } from './compile'
import { actionNamed, createAction, getAction, listActions, updateAction, withActionLock, type ActionListOptions, type ActionRow } from './repository'
import { validateActionBody, type ActionInput, type StepInput } from './validation'

const db = <T>(fn: () => Promise<T>): Promise<T> => databaseWork(fn)

function stepJson(step: StepInput) {
  return {
    event: step.event ?? null,
    url: step.url ?? null,
    url_matching: step.url_matching ?? (step.url ? 'contains' : null),
    properties: step.properties ?? [],
    text: step.text ?? null,
    text_matching: step.text_matching ?? null,
    href: step.href ?? null,
    href_matching: step.href_matching ?? null,
    selector: step.selector ?? null,
    tag_name: step.tag_name ?? null,
  }
}

export function actionJson(row: ActionRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    tags: row.tags,
    post_to_slack: row.post_to_slack,
    slack_message_format: row.slack_message_format,
    steps: row.steps.map(stepJson),
    created_at: isoDate(row.created_at),
    created_by: row.created_by,
    deleted: row.deleted,
    // matching is computed by each query, never ahead of time: nothing is ever being calculated
    is_calculating: false,
    last_calculated_at: isoDate(row.updated_at),
    pinned_at: isoDate(row.pinned_at),
    team_id: row.team_id,
    bytecode_error: null,
  }
}

export class ActionService {
  constructor(private readonly deps: { sql: Sql }) {}

  list(teamId: number, options: ActionListOptions) {
    return db(async () => {
      const { count, rows } = await listActions(this.deps.sql, teamId, options)
      return { count, results: rows.map(actionJson) }
    })
  }

  private async existing(sql: Sql, teamId: number, id: string): Promise<ActionRow> {
    const row = NUMERIC_ID.test(id) ? await getAction(sql, teamId, Number(id)) : null
    if (!row) throw errors.notFound()
    return row
  }

  retrieve(teamId: number, id: string) {
    return db(async () => actionJson(await this.existing(this.deps.sql, teamId, id)))
  }

  create(teamId: number, userId: number, body: unknown) {
    return db(async () => {
      const input = validateActionBody(body, 'POST')
      const id = await withActionLock(this.deps.sql, teamId, async (tx) => {
        if (!input.deleted) await nameIsFree(tx, teamId, input.name!, null)
        return createAction(tx, teamId, userId, input)
      })
      return actionJson((await getAction(this.deps.sql, teamId, id))!)
    })
  }

  update(teamId: number, id: string, body: unknown) {
    return db(async () => {
      const input: ActionInput = validateActionBody(body, 'PATCH')
      const row = await withActionLock(this.deps.sql, teamId, async (tx) => {
        const before = await this.existing(tx, teamId, id)
        // the name must be free whenever the action ends up not deleted (renamed, or restored under a taken name)
        const name = input.name ?? before.name
        if (!(input.deleted ?? before.deleted) && (input.name !== undefined || input.deleted === false)) await nameIsFree(tx, teamId, name, before.id)
        if (!(await updateAction(tx, teamId, before.id, input))) throw errors.notFound()
        return before.id
      })
      return actionJson((await getAction(this.deps.sql, teamId, row))!)
    })
  }

  /**
   * An action of the project as insights use it: its name and its steps' condition (property filters compiled by
   * the insight's own compiler); null when the project has no such action. A deleted action still answers, as a
   * saved insight naming it still runs in PostHog.
   */
  async condition(teamId: number, id: number, properties: PropertiesCompiler, attr: string): Promise<{ name: string; condition: string } | null> {
    const row = await db(() => getAction(this.deps.sql, teamId, id))
    if (!row) return null
    return { name: row.name, condition: await actionCondition(row.steps, attr, properties) }
  }

  /**
   * An action's events as one condition where no person sets are at hand (experiment metrics): event property
   * filters only, a person or cohort filter of a step refused by name.
   */
  async eventCondition(teamId: number, id: number, attr: string): Promise<string | null> {
    return (await this.condition(teamId, id, async (input, at) => propertiesCondition(input, at), attr))?.condition ?? null
  }
}

async function nameIsFree(tx: Sql, teamId: number, name: string, exceptId: number | null): Promise<void> {
  const other = await actionNamed(tx, teamId, name, exceptId)
  if (other !== null) throw errors.validation('unique', `This project already has an action with this name, ID ${other}`, 'name')
}
