// An experiment: its flag, variants, metric and status; "Launch" (a draft), "Stop" (running, behind a dialog);
// the results per variant (exposures, conversion or mean, chance to win, interval) or why there are none yet.
import { api, projectPath, query } from '../lib/api'
import { ConfirmedButton, ErrorNote, Link, Loading, Page, time, useAsync } from '../lib/ui'
import { useAction } from '../lib/forms'
import { Table } from '../lib/lists'
import { useSession } from '../lib/session'
import { ExperimentForm } from './ExperimentForm'
import { notEnoughData, resultRows, type ResultsAnswer } from './results'
import { navigate } from '../lib/router'
import { metricText, STATUS_TEXT, type Experiment } from './types'

/** The experiment's verdict in one sentence, once every variant has statistics. */
function verdict(answer: ResultsAnswer): string | null {
  const variants = answer.variant_results
  if (variants.length === 0 || variants.some((v) => (v.validation_failures ?? []).length > 0 || typeof v.significant !== 'boolean')) return null
  const winners = variants.filter((v) => v.significant).map((v) => v.key)
  return winners.length ? `Significant: ${winners.join(', ')} differs from ${answer.baseline.key}.` : 'Not significant: no variant differs from the control beyond chance yet.'
}

function Results(props: { experiment: Experiment }) {
  const { projectId } = useSession()
  const { experiment } = props
  const metric = experiment.metrics[0]
  const results = useAsync(
    (signal) => api<ResultsAnswer>(projectPath(projectId, `experiments/${experiment.id}/results/${query({ metric_index: 0 })}`), { signal }),
    [projectId, experiment.id, experiment.status],
  )
  if (!metric) return <p class="muted">This experiment has no metric yet: add one through the experiments API (PATCH metrics).</p>
  const answer = results.data
  const reasons = answer ? notEnoughData(answer) : []
  const valueColumn = metric.metric_type === 'funnel' ? 'Conversion' : 'Mean'
  return (
    <section aria-labelledby="results-title">
      <div class="page-head">
        <h2 id="results-title">Results</h2>
        <button type="button" onClick={results.reload} disabled={results.loading}>
          {results.loading ? 'Reading…' : 'Reload results'}
        </button>
      </div>
      <p class="muted small">Metric: {metricText(metric)}.</p>
      <ErrorNote error={results.error} />
      {!answer && results.loading ? <Loading what="the results" /> : null}
      {answer ? (
        <>
          {reasons.length ? (
            <p class="note" role="status">
              {`Not enough data yet to compare the variants: ${reasons.join('; ')}.`}
            </p>
          ) : null}
          <Table caption="Results" columns={['Variant', 'Exposures', valueColumn, 'Chance to win', '95% interval', 'Significance']}>
            {resultRows(answer, metric.metric_type).map((row) => (
              <tr key={row.variant}>
                <th scope="row" class="mono">
                  {row.variant}
                </th>
                <td>{row.exposures}</td>
                <td>{row.value}</td>
                <td>{row.chanceToWin}</td>
                <td>{row.interval}</td>
                <td>{row.verdict}</td>
              </tr>
            ))}
          </Table>
          {answer.exposures_excluded ? <p class="muted small">{`${answer.exposures_excluded} persons seen in two variants are left out.`}</p> : null}
          {verdict(answer) ? (
            <p role="status" class="note">
              {verdict(answer)}
            </p>
          ) : null}
          {typeof answer.recommended_sample_size === 'number' ? (
            <p class="muted small">{`Recommended sample size: ${answer.recommended_sample_size} persons per variant, enough to tell the minimum detectable effect from chance; the chance to win can look decided long before that.`}</p>
          ) : null}
        </>
      ) : null}
    </section>
  )
}

function ExperimentView(props: { id: string }) {
  const { projectId } = useSession()
  const experiment = useAsync((signal) => api<Experiment>(projectPath(projectId, `experiments/${encodeURIComponent(props.id)}/`), { signal }), [projectId, props.id])
  const action = useAction()
  const e = experiment.data
  if (!e) return <Page title="Experiment">{experiment.error ? <ErrorNote error={experiment.error} /> : <Loading what="the experiment" />}</Page>
  const write = (json: Record<string, unknown>) =>
    action.run(async () => {
      await api(projectPath(projectId, `experiments/${e.id}/`), { method: 'PATCH', json })
      experiment.reload()
    })
  const variants = e.parameters?.feature_flag_variants ?? []
  return (
    <Page
      title={e.name}
      actions={
        <div class="row">
          {e.status === 'draft' ? (
            <ConfirmedButton label="Launch" title={`Launch the experiment “${e.name}”?`} disabled={action.busy} onConfirm={() => write({ start_date: new Date().toISOString() })}>
              <p>{`The flag ${e.feature_flag?.key ?? e.feature_flag_key ?? ''} turns on now and its variants are fixed from then on.`}</p>
            </ConfirmedButton>
          ) : null}
          {e.status === 'running' ? (
            <ConfirmedButton label="Stop" title={`Stop the experiment “${e.name}”?`} onConfirm={() => write({ end_date: new Date().toISOString() })}>
              <p>Results stop counting now. The flag stays as it is: roll the winner out on the flag.</p>
            </ConfirmedButton>
          ) : null}
          <ConfirmedButton
            label="Delete"
            name={`Delete experiment ${e.name}`}
            title={`Delete the experiment “${e.name}”?`}
            disabled={action.busy}
            onConfirm={() =>
              action.run(async () => {
                // no DELETE in PostHog's experiments API: a deleted experiment is PATCHed `deleted: true`
                await api(projectPath(projectId, `experiments/${e.id}/`), { method: 'PATCH', json: { deleted: true } })
                navigate('/experiments')
              })
            }
          >
            <p>Its flag stays, and can be deleted on its own page afterwards.</p>
          </ConfirmedButton>
        </div>
      }
    >
      <ErrorNote error={action.error} />
      <dl class="figures">
        <div>
          <dt>Status</dt>
          <dd>
            <span role="status">{STATUS_TEXT[e.status] ?? e.status}</span>
          </dd>
        </div>
        <div>
          <dt>Feature flag</dt>
          <dd class="mono">{e.feature_flag ? <Link to={`/flags/${e.feature_flag.id}`}>{e.feature_flag.key}</Link> : (e.feature_flag_key ?? '—')}</dd>
        </div>
        <div>
          <dt>Variants</dt>
          <dd>{variants.map((v) => `${v.key} ${v.rollout_percentage}%`).join(', ') || '—'}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{time(e.start_date)}</dd>
        </div>
        <div>
          <dt>Ended</dt>
          <dd>{time(e.end_date)}</dd>
        </div>
      </dl>
      {e.status === 'draft' ? <p class="muted">A draft counts nothing: its flag is off until you launch it.</p> : <Results experiment={e} />}
    </Page>
  )
}

export function ExperimentPage(props: { id: string | null }) {
  return props.id === null ? <ExperimentForm /> : <ExperimentView id={props.id} />
}
