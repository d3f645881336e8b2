// Surveys behind the routes: the REST writes (the survey and its targeting flags in one transaction under the flag
// service's project write lock, which also bumps the project's flag version so every process's caches, the
// remote config's `surveys` and the public survey list included, learn of it).
import type { Sql } from 'postgres'
import { databaseWork, errors } from '../http/errors'
import { UUID_PATTERN } from '../http/fields'
import { bumpFlagVersion } from '../flags/repository'
import type { FlagService } from '../flags/service'
import {
  countSurveys, deleteSurvey, getSurvey, insertSurvey, listSurveys, nameTaken, projectActions, projectFlagIds, updateSurvey,
  type SurveyFields, type SurveyListOptions, type SurveyRow,
} from './repository'
import { surveyJson } from './serialize'
import { currentIteration, internalTargetingFilters, iterationStartDates, surveyPropertySuffix, targetingFlagKey } from './targeting'
import { checkTargetingFilters, overBudget, validateSurveyBody, type SurveyInput, type SurveyLimits } from './validation'

export interface SurveysServiceOptions {
  sql: Sql
  flags: FlagService
  /** whether flag writes NOTIFY the other processes (a real Postgres) */
  notify: boolean
  limits: SurveyLimits & { maxPerProject: number }
  now?: () => number
}

export class SurveysService {
  constructor(private readonly deps: SurveysServiceOptions) {}

  private now(): number {
    return (this.deps.now ?? Date.now)()
  }

  list(teamId: number, options: SurveyListOptions) {
    return databaseWork(async () => {
      const { count, rows } = await listSurveys(this.deps.sql, teamId, options)
      return { count, results: rows.map(surveyJson) }
    })
  }

  retrieve(teamId: number, id: string) {
    return databaseWork(async () => surveyJson(await existing(this.deps.sql, teamId, id)))
  }

  create(teamId: number, userId: number, body: unknown) {
    const input = validateSurveyBody(body, 'POST', this.deps.limits)
    return this.deps.flags.inWriteTransaction(teamId, async (tx) => {
      if ((await countSurveys(tx, teamId)) >= this.deps.limits.maxPerProject) {
        throw overBudget(this.deps.limits, 'surveys_per_project', `A project may have at most ${this.deps.limits.maxPerProject} surveys (SURVEYS_MAX_PER_PROJECT): delete some first.`)
      }
      await this.checkReferences(tx, teamId, input, null)
      const id = crypto.randomUUID()
      const { targeting_flag_filters, remove_targeting_flag: _, actionIds: __, ...fields } = input
      await insertSurvey(tx, teamId, userId, id, fields as SurveyFields & { name: string; type: string })
      const running = input.end_date == null
      const write: SurveyFields = {}
      if (targeting_flag_filters) write.targeting_flag_id = await this.makeTargetingFlag(tx, teamId, userId, input.name!, targeting_flag_filters, running)
      Object.assign(write, this.iterations(input, null))
      const suffix = surveyPropertySuffix(id, input.iteration_count ?? null, write.current_iteration ?? null)
      write.internal_targeting_flag_id = await this.makeInternalFlag(tx, teamId, userId, input.name!, suffix, running)
      await updateSurvey(tx, teamId, id, write)
      await bumpFlagVersion(tx, teamId, this.deps.notify)
      return surveyJson((await getSurvey(tx, teamId, id))!)
    })
  }

  /** PATCH: start_date launches, end_date stops (its flags switched off, back on if end_date is cleared), archive. */
  update(teamId: number, id: string, userId: number, body: unknown) {
    const input = validateSurveyBody(body, 'PATCH', this.deps.limits)
    return this.deps.flags.inWriteTransaction(teamId, async (tx) => {
      const row = await existing(tx, teamId, id)
      await this.checkReferences(tx, teamId, input, row.id)
      const { targeting_flag_filters, remove_targeting_flag, actionIds: _, ...fields } = input
      const write: SurveyFields = { ...fields }
      const end = input.end_date !== undefined ? input.end_date : row.end_date
      const running = end == null
      const name = input.name ?? row.name
      const targeting = row.targeting_flag && !row.targeting_flag.deleted ? row.targeting_flag : null
      if (remove_targeting_flag) {
        if (targeting) await this.deps.flags.updateIn(tx, teamId, targeting.id, userId, { deleted: true }, 'PATCH')
        write.targeting_flag_id = null
      } else if (targeting_flag_filters) {
        checkTargetingFilters(targeting_flag_filters)
        if (targeting) await this.deps.flags.updateIn(tx, teamId, targeting.id, userId, { filters: targeting_flag_filters }, 'PATCH')
        else write.targeting_flag_id = await this.makeTargetingFlag(tx, teamId, userId, name, targeting_flag_filters, running)
      }
      if (targeting && !remove_targeting_flag && targeting.active !== running) {
        await this.deps.flags.updateIn(tx, teamId, targeting.id, userId, { active: running }, 'PATCH')
      }
      Object.assign(write, this.iterations(input, row))
      const iterationCount = input.iteration_count !== undefined ? input.iteration_count : row.iteration_count
      const iteration = write.current_iteration !== undefined ? write.current_iteration : row.current_iteration
      const filters = internalTargetingFilters(surveyPropertySuffix(row.id, iterationCount, iteration))
      const internal = row.internal_targeting_flag && !row.internal_targeting_flag.deleted ? row.internal_targeting_flag : null
      if (!internal) write.internal_targeting_flag_id = await this.makeInternalFlag(tx, teamId, userId, name, surveyPropertySuffix(row.id, iterationCount, iteration), running)
      else if (internal.active !== running || JSON.stringify(internal.filters) !== JSON.stringify(filters)) {
        await this.deps.flags.updateIn(tx, teamId, internal.id, userId, { active: running, filters }, 'PATCH')
      }
      await updateSurvey(tx, teamId, row.id, write)
      await bumpFlagVersion(tx, teamId, this.deps.notify)
      return surveyJson((await getSurvey(tx, teamId, row.id))!)
    })
  }

  /** DELETE: the survey goes, and with it the flags it made (soft-deleted, as any flag; the linked flag stays). */
  remove(teamId: number, id: string, userId: number) {
    return this.deps.flags.inWriteTransaction(teamId, async (tx) => {
      const row = await existing(tx, teamId, id)
      for (const flag of [row.targeting_flag, row.internal_targeting_flag]) {
        if (flag && !flag.deleted) await this.deps.flags.updateIn(tx, teamId, flag.id, userId, { deleted: true }, 'PATCH')
      }
      await deleteSurvey(tx, teamId, row.id)
      await bumpFlagVersion(tx, teamId, this.deps.notify)
    })
  }

  /** Name unique in the project, the linked flag and the actions the project's own. */
  private async checkReferences(tx: Sql, teamId: number, input: SurveyInput, exceptId: string | null): Promise<void> {
    if (input.name !== undefined && (await nameTaken(tx, teamId, input.name, exceptId))) {
      throw errors.validation('unique', 'There is already another survey with this name.', 'name')
    }
    if (input.linked_flag_id != null && !(await projectFlagIds(tx, teamId, [input.linked_flag_id])).has(input.linked_flag_id)) {
      throw errors.validation('invalid_input', 'The linked flag is not a feature flag of this project.', 'linked_flag_id')
    }
    if (input.actionIds && input.actionIds.length > 0) {
      const found = new Set((await projectActions(tx, teamId, input.actionIds)).map((a) => a.id))
      const missing = input.actionIds.find((a) => !found.has(a))
      if (missing !== undefined) throw errors.validation('invalid_input', `This project has no action with id ${missing}.`, 'conditions__actions')
    }
    if (input.targeting_flag_filters) checkTargetingFilters(input.targeting_flag_filters)
  }

  private async makeTargetingFlag(tx: Sql, teamId: number, userId: number, name: string, filters: Record<string, unknown>, active: boolean): Promise<number> {
    checkTargetingFilters(filters)
    const flag = await this.deps.flags.createIn(tx, teamId, userId, { key: targetingFlagKey(false), name: `Targeting flag for survey ${name}`.slice(0, 400), filters, active })
    return flag.id as number
  }

  private async makeInternalFlag(tx: Sql, teamId: number, userId: number, name: string, suffix: string, active: boolean): Promise<number> {
    const body = { key: targetingFlagKey(true), name: `Targeting flag for survey ${name}`.slice(0, 400), filters: internalTargetingFilters(suffix), active }
    const flag = await this.deps.flags.createIn(tx, teamId, userId, body)
    return flag.id as number
  }

  /** Iterations: their start dates laid out when the survey launches with iteration_count; the current one. */
  private iterations(input: SurveyInput, row: SurveyRow | null): SurveyFields {
    const start = input.start_date !== undefined ? input.start_date : row?.start_date ? new Date(row.start_date) : null
    const count = input.iteration_count !== undefined ? input.iteration_count : (row?.iteration_count ?? null)
    const every = input.iteration_frequency_days !== undefined ? input.iteration_frequency_days : (row?.iteration_frequency_days ?? null)
    const changed = input.start_date !== undefined || input.iteration_count !== undefined || input.iteration_frequency_days !== undefined
    if (!changed) return {}
    if (!start || !count || count <= 0 || !every) return { iteration_start_dates: null, current_iteration: null, current_iteration_start_date: null }
    const dates = iterationStartDates(start, count, every)
    const current = currentIteration(dates, this.now()) ?? { iteration: 1, start }
    return { iteration_start_dates: dates, current_iteration: current.iteration, current_iteration_start_date: current.start }
  }
}

async function existing(sql: Sql, teamId: number, id: string): Promise<SurveyRow> {
  const row = UUID_PATTERN.test(id) ? await getSurvey(sql, teamId, id) : null
  if (!row) throw errors.notFound()
  return row
}
