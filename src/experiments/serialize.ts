// An experiment as the REST API renders it (PostHog's ExperimentSerializer fields).
import { isoDate } from '../http/format'
import type { ExperimentRow } from './repository'

export type ExperimentStatus = 'draft' | 'running' | 'complete'

export function statusOf(row: Pick<ExperimentRow, 'start_date' | 'end_date'>): ExperimentStatus {
  return row.start_date === null ? 'draft' : row.end_date === null ? 'running' : 'complete'
}

export function experimentJson(row: ExperimentRow) {
  const flag = row.flag
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    start_date: isoDate(row.start_date),
    end_date: isoDate(row.end_date),
    feature_flag_key: flag?.key ?? null,
    feature_flag: flag ? { id: flag.id, team_id: row.team_id, name: flag.name, key: flag.key, filters: flag.filters, deleted: flag.deleted, active: flag.active } : null,
    holdout: null,
    holdout_id: null,
    exposure_cohort: null,
    parameters: row.parameters,
    secondary_metrics: [],
    saved_metrics: [],
    saved_metrics_ids: [],
    filters: {},
    archived: row.archived,
    deleted: row.deleted,
    created_by: row.created_by,
    created_at: isoDate(row.created_at),
    updated_at: isoDate(row.updated_at),
    type: 'product',
    exposure_criteria: row.exposure_criteria,
    metrics: row.metrics as never[],
    metrics_secondary: row.metrics_secondary as never[],
    stats_config: row.stats_config,
    conclusion: row.conclusion,
    conclusion_comment: row.conclusion_comment,
    status: statusOf(row),
  }
}
