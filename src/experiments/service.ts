// Experiments behind the routes: the REST writes (the experiment and its flag in one transaction under the flag
// service's project write lock) and the results (exposed persons counted per variant in the store, the metric
// joined for those who did a metric event, then the statistics; never refused, sampled past the caps).
import type { Sql } from 'postgres'
import { databaseWork, errors } from '../http/errors'
import { NUMERIC_ID } from '../http/fields'
import type { Config } from '../config'
import type { FlagService } from '../flags/service'
import type { Metrics } from '../ops/metrics'
import type { QueryService } from '../query/service'
import { metricEvents, type Window } from './counting'
import { countVariants, isFlood, resultsAnswer, resultWarnings, type ResultCaps, type SampledBy } from './results'
import { countExperiments, experimentOnFlag, getExperiment, launchedOnFlag, insertExperiment, listExperiments, updateExperiment, type ExperimentListOptions, type ExperimentRow } from './repository'
import { experimentJson } from './serialize'
import type { Method } from './stats/methods'
import { checkMetric, checkVariants, validateExperimentBody, type Metric, type VariantInput } from './validation'

/** experiments a project may have (not deleted) */
export const MAX_EXPERIMENTS_PER_PROJECT = 1000

export interface ExperimentsServiceOptions {
  sql: Sql
  /** the flag service, for the writes (an analytics thread, which only computes results, has none) */
  flags?: FlagService
  query: QueryService
  /** EXPERIMENT_MAX_EXPOSED_PERSONS: exposed persons with metric events joined one by one; past it, a sample */
  maxExposedPersons: number
  /** EXPERIMENT_MAX_METRIC_ROWS: metric events read; past it, a sample */
  maxMetricRows: number
  /** a result computed on a sample of persons, by the cap that made it one */
  onSampled?: (limit: SampledBy) => void
  /** a result answered with the note that its exposures look flooded */
  onExposureFlood?: () => void
  /**
   * The events of the project's action `id` as one HogQL condition (null: no such action), for metrics that count
   * an action (ActionsNode); absent, such metrics are refused. The composition root hands src/actions/'s.
   */
  actionCondition?: (teamId: number, id: number, attr: string) => Promise<string | null>
  now?: () => number
}

const DEFAULT_VARIANTS: VariantInput[] = [
  { key: 'control', name: 'Control', rollout_percentage: 50 },
  { key: 'test', name: 'Test', rollout_percentage: 50 },
]

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A flag's variants, or null when it is not multivariate. */
function flagVariants(filters: unknown): VariantInput[] | null {
  const list = isObject(filters) && isObject(filters.multivariate) ? filters.multivariate.variants : null
  if (!Array.isArray(list)) return null
  return list.map((v) => ({ key: String(v?.key), ...(typeof v?.name === 'string' ? { name: v.name } : {}), rollout_percentage: Number(v?.rollout_percentage) }))
}

const sameVariants = (a: readonly VariantInput[], b: readonly VariantInput[]) =>
  a.length === b.length && a.every((v, i) => v.key === b[i]!.key && v.rollout_percentage === b[i]!.rollout_percentage)

/** The budgets and counters every thread builds its experiments service with (from the configuration). */
export function experimentBudgets(
  config: Pick<Config, 'EXPERIMENT_MAX_EXPOSED_PERSONS' | 'EXPERIMENT_MAX_METRIC_ROWS'>,
  metrics: Pick<Metrics, 'experimentResultsSampled' | 'experimentExposureFlood'>,
): Pick<ExperimentsServiceOptions, 'maxExposedPersons' | 'maxMetricRows' | 'onSampled' | 'onExposureFlood'> {
  return {
    maxExposedPersons: config.EXPERIMENT_MAX_EXPOSED_PERSONS,
    maxMetricRows: config.EXPERIMENT_MAX_METRIC_ROWS,
    onSampled: (limit) => metrics.experimentResultsSampled.inc({ limit }),
    onExposureFlood: () => metrics.experimentExposureFlood.inc(),
  }
}

export class ExperimentsService {
  private readonly caps: ResultCaps

  constructor(private readonly deps: ExperimentsServiceOptions) {
    this.caps = { maxExposedPersons: deps.maxExposedPersons, maxMetricRows: deps.maxMetricRows, onSampled: deps.onSampled }
    // through the flags API too: a launched experiment's variants stay as they were
    deps.flags?.addUpdateCheck(async (tx, teamId, existing, input) => {
      // as PostHog: the experiment goes first (its results read the flag's exposures)
      if (input.deleted === true && !existing.deleted && (await experimentOnFlag(tx, teamId, existing.id))) {
        throw errors.validation('invalid_input', 'Cannot delete a feature flag that is in use with an experiment. Please delete the experiment before deleting the flag.', 'deleted')
      }
      if (input.filters === undefined) return
      const before = flagVariants(existing.filters)
      const after = flagVariants(input.filters)
      if (before && !(after && sameVariants(after, before)) && (await launchedOnFlag(tx, teamId, existing.id))) {
        throw errors.validation('invalid_input', "This flag's experiment has launched: its variants cannot change.", 'filters')
      }
    })
  }

  private get flags(): FlagService {
    if (!this.deps.flags) throw new Error('This experiments service computes results only: it was built without the flag service its writes need')
    return this.deps.flags
  }

  list(teamId: number, options: ExperimentListOptions) {
    return databaseWork(async () => {
      const { count, rows } = await listExperiments(this.deps.sql, teamId, options)
      return { count, results: rows.map(experimentJson) }
    })
  }

  retrieve(teamId: number, id: string) {
    return databaseWork(async () => experimentJson(await this.existing(this.deps.sql, teamId, id)))
  }

  private async existing(sql: Sql, teamId: number, id: string | number): Promise<ExperimentRow> {
    const row = NUMERIC_ID.test(String(id)) ? await getExperiment(sql, teamId, Number(id)) : null
    if (!row || row.deleted) throw errors.notFound()
    return row
  }

  /** Creates the experiment and makes its flag (inactive while a draft) or reuses the project's flag with that key. */
  create(teamId: number, userId: number, body: unknown) {
    const input = validateExperimentBody(body, 'POST')
    const { fields } = input
    const key = input.featureFlagKey!
    return this.flags.inWriteTransaction(teamId, async (tx) => {
      if ((await countExperiments(tx, teamId)) >= MAX_EXPERIMENTS_PER_PROJECT) {
        throw errors.validation('limit_exceeded', `A project may have at most ${MAX_EXPERIMENTS_PER_PROJECT} experiments: delete some first.`)
      }
      if (fields.end_date && !fields.start_date) throw errors.validation('invalid_input', 'An experiment cannot end before it starts: give start_date too.', 'end_date')
      const launched = fields.start_date != null
      const existing = await this.flags.flagByKey(tx, teamId, key)
      let flagId: number
      let variants: VariantInput[]
      if (existing) {
        const found = flagVariants(existing.filters)
        if (!found || found.length < 2 || found[0]!.key !== 'control') {
          throw errors.validation('invalid_input', 'A feature flag with this key exists and is not a multivariate flag with at least two variants, "control" first: choose another key.', 'feature_flag_key')
        }
        if (input.variants && !sameVariants(input.variants, found)) {
          throw errors.validation('invalid_input', 'The existing feature flag has other variants: leave parameters.feature_flag_variants out to use them.', 'parameters__feature_flag_variants')
        }
        variants = found
        flagId = existing.id
        if (launched && !existing.active) await this.flags.updateIn(tx, teamId, existing.id, userId, { active: true }, 'PATCH')
      } else {
        variants = input.variants ?? DEFAULT_VARIANTS
        const flag = await this.flags.createIn(tx, teamId, userId, {
          key,
          name: `Feature Flag for Experiment ${fields.name}`.slice(0, 400),
          active: launched,
          filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants }, payloads: {} },
        })
        flagId = flag.id
      }
      fields.parameters = { ...(fields.parameters ?? {}), feature_flag_variants: variants }
      return experimentJson(await insertExperiment(tx, teamId, userId, flagId, { ...fields, name: fields.name! }))
    })
  }

  /** PATCH: start_date launches (flag active), end_date stops; variants fixed after launch; deleted: true deletes. */
  update(teamId: number, id: string, userId: number, body: unknown) {
    const input = validateExperimentBody(body, 'PATCH')
    const { fields } = input
    return this.flags.inWriteTransaction(teamId, async (tx) => {
      const row = await this.existing(tx, teamId, id)
      if (input.featureFlagKey !== undefined && input.featureFlagKey !== row.flag?.key) {
        throw errors.validation('invalid_input', "An experiment's feature flag cannot be changed.", 'feature_flag_key')
      }
      const start = fields.start_date !== undefined ? fields.start_date : row.start_date === null ? null : new Date(row.start_date)
      const end = fields.end_date !== undefined ? fields.end_date : row.end_date === null ? null : new Date(row.end_date)
      if (end && !start) throw errors.validation('invalid_input', 'An experiment cannot end before it starts.', 'end_date')
      if (end && start && end.getTime() < start.getTime()) throw errors.validation('invalid_input', 'end_date must not be before start_date.', 'end_date')
      const wasLaunched = row.start_date !== null
      const current = flagVariants(row.flag?.filters) ?? (row.parameters.feature_flag_variants as VariantInput[] | undefined) ?? []
      if (input.variants && !sameVariants(input.variants, current)) {
        if (wasLaunched) throw errors.validation('invalid_input', "Variants cannot be changed after the experiment's launch.", 'parameters__feature_flag_variants')
        if (row.flag) {
          const filters = { ...row.flag.filters, multivariate: { variants: input.variants } }
          await this.flags.updateIn(tx, teamId, row.flag.id, userId, { filters }, 'PATCH')
        }
      }
      if (fields.parameters) fields.parameters = { ...fields.parameters, feature_flag_variants: input.variants ?? current }
      // launching (or going back to draft) switches the flag
      if (row.flag && !row.flag.deleted && (start !== null) !== wasLaunched) {
        await this.flags.updateIn(tx, teamId, row.flag.id, userId, { active: start !== null }, 'PATCH')
      }
      return experimentJson(await updateExperiment(tx, teamId, row.id, fields))
    })
  }

  /**
   * Results of one metric (the experiment's first when `metric` is null), in PostHog's new-engine shape. Counted
   * through the query service (the project's tenant condition, time limit and byte budget on every read). Never
   * refused for its size: past EXPERIMENT_MAX_EXPOSED_PERSONS or EXPERIMENT_MAX_METRIC_ROWS it is computed on a
   * uniform sample of persons (`sampling_rate`); exposures that /decide's answers do not explain are a warning.
   */
  async results(teamId: number, experimentId: number | string, metric: unknown, signal?: AbortSignal, metricIndex = 0) {
    const row = await databaseWork(() => this.existing(this.deps.sql, teamId, experimentId))
    const chosen: Metric = metric != null ? checkMetric(metric, 'metric') : this.storedMetric(row, metricIndex)
    if (row.start_date === null) throw errors.validation('not_started', 'The experiment has not started (no start_date): it has no results yet.', 'experiment_id')
    if (!row.flag) throw errors.validation('invalid_input', "The experiment's feature flag no longer exists: it has no exposures to count.", 'experiment_id')
    const variants = flagVariants(row.flag.filters) ?? (row.parameters.feature_flag_variants as VariantInput[] | undefined) ?? []
    checkVariants(variants, 'experiment_id')
    const from = new Date(row.start_date).getTime()
    const to = row.end_date === null ? (this.deps.now ?? Date.now)() : new Date(row.end_date).getTime()
    const window: Window = { flagKey: row.flag.key, variants: variants.map((v) => v.key), from, to }
    const handling = (row.exposure_criteria.multiple_variant_handling as 'exclude' | 'first_seen' | undefined) ?? 'exclude'

    const events = metricEvents(chosen, await this.actionsOf(teamId, chosen, metric != null ? 'metric' : `metrics__${metricIndex}`))
    const tally = await countVariants(this.deps.query, teamId, window, chosen, handling, this.caps, signal, events)
    if (isFlood(tally.evidence)) this.deps.onExposureFlood?.()
    const method: Method = row.stats_config.method === 'frequentist' ? 'frequentist' : 'bayesian'
    const extra = { samplingRate: tally.samplingRate, warnings: resultWarnings(window, tally) }
    return resultsAnswer(chosen, tally.counts, method, row.parameters.minimum_detectable_effect as number | null | undefined, tally.excluded, extra)
  }

  /** The condition of each action the metric names, read once each (404 for an action the project does not have). */
  private async actionsOf(teamId: number, metric: Metric, attr: string): Promise<Map<number, string>> {
    const found = new Map<number, string>()
    const nodes = metric.metric_type === 'mean' ? [{ node: metric.source!, at: `${attr}__source` }] : metric.series!.map((node, i) => ({ node, at: `${attr}__series__${i}` }))
    for (const { node, at } of nodes) {
      if (node.kind !== 'ActionsNode' || found.has(node.id)) continue
      if (!this.deps.actionCondition) throw errors.validation('unsupported', 'Actions are not available here', at)
      const condition = await this.deps.actionCondition(teamId, node.id, at)
      if (condition === null) throw errors.notFound(`This project has no action with id ${node.id} (${at})`)
      found.set(node.id, condition)
    }
    return found
  }

  private storedMetric(row: ExperimentRow, index: number): Metric {
    const all = [...row.metrics, ...row.metrics_secondary]
    if (all.length === 0) throw errors.validation('invalid_input', 'The experiment has no metrics: send one in `metric`.', 'metric')
    if (!Number.isInteger(index) || index < 0 || index >= all.length) {
      throw errors.validation('invalid_input', `metric_index must be between 0 and ${all.length - 1} (metrics, then metrics_secondary).`, 'metric_index')
    }
    return all[index] as Metric
  }
}
