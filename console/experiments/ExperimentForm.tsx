// "New experiment": name, the feature flag key (made as a multivariate flag, inactive while a draft), its
// variants and percentages, and the metric (a conversion to an event, or a mean per person).
import { useState } from 'preact/hooks'
import { api, projectPath } from '../lib/api'
import { Field, Page, valueOf } from '../lib/ui'
import { SaveFooter, useAction } from '../lib/forms'
import { navigate } from '../lib/router'
import { useSession } from '../lib/session'
import { EventNames } from '../insights/Builders'
import type { Experiment, ExperimentMetric } from './types'

interface VariantForm {
  key: string
  percentage: number
}

/** The metric node the API takes, from the form. */
export function metricNode(type: 'funnel' | 'mean', event: string, math: string, property: string): ExperimentMetric {
  if (type === 'funnel') return { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: event.trim() }] }
  const source: NonNullable<ExperimentMetric['source']> = { kind: 'EventsNode', event: event.trim(), math }
  if (math === 'sum') source.math_property = property.trim()
  return { kind: 'ExperimentMetric', metric_type: 'mean', source }
}

export function ExperimentForm() {
  const { projectId } = useSession()
  const [name, setName] = useState('')
  const [flagKey, setFlagKey] = useState('')
  const [variants, setVariants] = useState<VariantForm[]>([
    { key: 'control', percentage: 50 },
    { key: 'test', percentage: 50 },
  ])
  const [metricType, setMetricType] = useState<'funnel' | 'mean'>('funnel')
  const [event, setEvent] = useState('')
  const [math, setMath] = useState('total')
  const [property, setProperty] = useState('')
  const [mde, setMde] = useState('')
  const action = useAction()
  const total = variants.reduce((sum, v) => sum + v.percentage, 0)
  const setVariant = (index: number, patch: Partial<VariantForm>) => {
    setVariants(variants.map((v, i) => (i === index ? { ...v, ...patch } : v)))
    action.reset()
  }
  const submit = (e: Event) => {
    e.preventDefault()
    action.run(async () => {
      const parameters: Record<string, unknown> = { feature_flag_variants: variants.map((v) => ({ key: v.key.trim(), rollout_percentage: v.percentage })) }
      if (mde.trim()) parameters.minimum_detectable_effect = Number(mde)
      const created = await api<Experiment>(projectPath(projectId, 'experiments/'), {
        // without a metric event the experiment is saved as a draft whose metric comes later, as PostHog allows
        json: { name: name.trim(), feature_flag_key: flagKey.trim(), parameters, metrics: event.trim() ? [metricNode(metricType, event, math, property)] : [] },
      })
      navigate(`/experiments/${created.id}`)
    })
  }
  return (
    <Page title="New experiment">
      <EventNames />
      <form class="stack" onSubmit={submit} onInput={() => action.reset()}>
        <Field label="Name">
          <input required maxLength={400} value={name} onInput={(e) => setName(valueOf(e))} />
        </Field>
        <Field label="Feature flag key" hint="a new flag is made (inactive until launch), or an existing multivariate flag with control first is used">
          <input required maxLength={400} class="mono" value={flagKey} onInput={(e) => setFlagKey(valueOf(e))} />
        </Field>
        <fieldset>
          <legend>Variants</legend>
          {variants.map((v, i) => (
            <div class="row" key={i} role="group" aria-label={`Variant ${i + 1}`}>
              <Field label="Variant key">
                <input required maxLength={200} class="mono" value={v.key} readOnly={i === 0} onInput={(e) => setVariant(i, { key: valueOf(e) })} />
              </Field>
              <Field label="Percentage">
                <input type="number" min={0} max={100} required value={v.percentage} onInput={(e) => setVariant(i, { percentage: Math.round(Number(valueOf(e))) || 0 })} />
              </Field>
              {i > 1 ? (
                <button type="button" onClick={() => setVariants(variants.filter((_, j) => j !== i))}>
                  {`Remove variant ${v.key || i + 1}`}
                </button>
              ) : null}
            </div>
          ))}
          <div class="row">
            <button type="button" disabled={variants.length >= 20} onClick={() => setVariants([...variants, { key: `test-${variants.length}`, percentage: 0 }])}>
              Add variant
            </button>
            <span class={total === 100 ? 'muted small' : 'error small'}>{`The percentages add up to ${total}%${total === 100 ? '.' : ': they must make 100%.'}`}</span>
          </div>
        </fieldset>
        <fieldset>
          <legend>Metric</legend>
          <div class="filters">
            <Field label="Metric type">
              <select value={metricType} onChange={(e) => setMetricType(valueOf(e) === 'mean' ? 'mean' : 'funnel')}>
                <option value="funnel">Conversion (did the event after exposure)</option>
                <option value="mean">Mean per person</option>
              </select>
            </Field>
            <Field label="Metric event" hint="optional: without one the experiment is a draft to add a metric to later">
              <input list="insight-event-names" maxLength={400} value={event} onInput={(e) => setEvent(valueOf(e))} />
            </Field>
            {metricType === 'mean' ? (
              <Field label="Per person">
                <select value={math} onChange={(e) => setMath(valueOf(e))}>
                  <option value="total">Number of events</option>
                  <option value="sum">Sum of a property</option>
                  <option value="dau">Did it at all (0 or 1)</option>
                </select>
              </Field>
            ) : null}
            {metricType === 'mean' && math === 'sum' ? (
              <Field label="Math property">
                <input required={event.trim() !== ''} list="insight-property-names" maxLength={400} value={property} onInput={(e) => setProperty(valueOf(e))} />
              </Field>
            ) : null}
            <Field label="Minimum detectable effect (%)" hint="optional: gives the recommended sample size">
              <input type="number" min={0} max={1000} step="any" value={mde} onInput={(e) => setMde(valueOf(e))} />
            </Field>
          </div>
        </fieldset>
        <SaveFooter action={action} />
      </form>
    </Page>
  )
}
