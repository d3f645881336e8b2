// The forms of the Insights page: a trend (series, math, a property filter, breakdown, interval, date range,
// compare) and a funnel (steps, window, order). Event names are suggested from the project's event definitions.
import { api, projectPath, query } from '../lib/api'
import { Field, Options, useAsync, valueOf } from '../lib/ui'
import { useSession } from '../lib/session'
import { ActionSelect, useActions } from './ActionSelect'
import { PropertyNames, PropertyValues } from '../definitions/suggestions'
import { COHORT_OPERATORS, DATE_RANGES, INTERVALS, MATHS, OPERATORS, ORDERS, PERIODS, PROPERTY_MATHS, RETENTION_TYPES, seriesLetter, WINDOW_UNITS, type FunnelForm, type LifecycleForm, type RetentionForm, type TrendForm } from './query'

const EVENT_LIST = 'insight-event-names'
const PROPERTY_LIST = 'insight-property-names'
const PERSON_PROPERTY_LIST = 'insight-person-property-names'
const FILTER_VALUE_LIST = 'insight-filter-values'

/** The project's event names, for every "Event" combobox of the page (one page of the definitions API). */
export function EventNames() {
  const { projectId } = useSession()
  const names = useAsync((signal) => api<{ results: { id: string; name: string }[] }>(projectPath(projectId, `event_definitions/${query({ limit: 200 })}`), { signal }), [projectId])
  return (
    <>
      <datalist id={EVENT_LIST}>
        {(names.data?.results ?? []).map((d) => (
          <option key={d.id} value={d.name} />
        ))}
      </datalist>
      <PropertyNames id={PROPERTY_LIST} type="event" />
      <PropertyNames id={PERSON_PROPERTY_LIST} type="person" />
    </>
  )
}

function EventInput(props: { value: string; onChange: (value: string) => void; byAction?: boolean }) {
  return (
    <Field label="Event" hint={props.byAction ? 'the action is counted instead' : 'empty: every event'}>
      <input list={EVENT_LIST} value={props.value} maxLength={400} disabled={props.byAction} onInput={(e) => props.onChange(valueOf(e))} />
    </Field>
  )
}

function DateRangeSelect(props: { value: string; onChange: (value: string) => void }) {
  return (
    <Field label="Date range">
      <select value={props.value} onChange={(e) => props.onChange(valueOf(e))}>
        <Options choices={DATE_RANGES} />
        {/* a saved insight's own range (written by a script) stays choosable */}
        {DATE_RANGES.some(([value]) => value === props.value) ? null : <option value={props.value}>{`From ${props.value}`}</option>}
      </select>
    </Field>
  )
}

function BreakdownInput(props: { value: string; onChange: (value: string) => void; type?: 'event' | 'person' }) {
  const person = props.type === 'person'
  return (
    <Field label="Breakdown" hint={`${person ? 'a person' : 'an event'} property (empty: none)`}>
      <input list={person ? PERSON_PROPERTY_LIST : PROPERTY_LIST} value={props.value} maxLength={400} onInput={(e) => props.onChange(valueOf(e))} />
    </Field>
  )
}

/** Whose property the breakdown reads; its name leaves "Breakdown" to the property field, which tests find by it. */
function BreakdownType(props: { value: 'event' | 'person'; onChange: (value: 'event' | 'person') => void }) {
  return (
    <Field label="Properties of">
      <select value={props.value} onChange={(e) => props.onChange(valueOf(e) === 'person' ? 'person' : 'event')}>
        <option value="event">Events</option>
        <option value="person">Persons</option>
      </select>
    </Field>
  )
}

function IntervalSelect(props: { value: TrendForm['interval']; onChange: (value: TrendForm['interval']) => void }) {
  return (
    <Field label="Interval">
      <select value={props.value} onChange={(e) => props.onChange(valueOf(e) as TrendForm['interval'])}>
        <Options choices={INTERVALS} />
      </select>
    </Field>
  )
}

/** A cohort filter: which cohort (the project's, one page of them) and in or not in it. */
function CohortFilter(props: { filter: TrendForm['filter']; onChange: (filter: TrendForm['filter']) => void }) {
  const { projectId } = useSession()
  const cohorts = useAsync((signal) => api<{ results: { id: number; name: string | null }[] }>(projectPath(projectId, `cohorts/${query({ limit: 200 })}`), { signal }), [projectId])
  return (
    <>
      <Field label="Cohort">
        <select value={props.filter.value} onChange={(e) => props.onChange({ ...props.filter, value: valueOf(e) })}>
          <option value="">Choose a cohort</option>
          {(cohorts.data?.results ?? []).map((c) => (
            <option key={c.id} value={String(c.id)}>
              {c.name || `Cohort ${c.id}`}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Operator">
        <select value={props.filter.operator} onChange={(e) => props.onChange({ ...props.filter, operator: valueOf(e) })}>
          <Options choices={COHORT_OPERATORS} />
        </select>
      </Field>
    </>
  )
}

export function TrendBuilder(props: { form: TrendForm; onChange: (form: TrendForm) => void }) {
  const { form, onChange } = props
  const set = (patch: Partial<TrendForm>) => onChange({ ...form, ...patch })
  const setSeries = (index: number, patch: Partial<TrendForm['series'][number]>) => set({ series: form.series.map((s, i) => (i === index ? { ...s, ...patch } : s)) })
  const actions = useActions()
  return (
    <div class="builder">
      {form.series.map((s, i) => (
        <fieldset key={i}>
          <legend>{`Series ${seriesLetter(i)}`}</legend>
          <div class="filters">
            <EventInput value={s.event} byAction={Boolean(s.action)} onChange={(event) => setSeries(i, { event })} />
            <ActionSelect actions={actions} value={s.action} onChange={(action) => setSeries(i, { action })} />
            <Field label="Math">
              <select value={s.math} onChange={(e) => setSeries(i, { math: valueOf(e) })}>
                <Options choices={MATHS} />
              </select>
            </Field>
            {PROPERTY_MATHS.has(s.math) ? (
              <Field label="Math property">
                <input list={PROPERTY_LIST} value={s.mathProperty} maxLength={400} onInput={(e) => setSeries(i, { mathProperty: valueOf(e) })} />
              </Field>
            ) : null}
            {form.series.length > 1 ? (
              <button type="button" onClick={() => set({ series: form.series.filter((_, j) => j !== i) })}>
                {`Remove series ${seriesLetter(i)}`}
              </button>
            ) : null}
          </div>
        </fieldset>
      ))}
      {form.series.length < 5 ? (
        <button type="button" onClick={() => set({ series: [...form.series, { event: '', math: 'total', mathProperty: '' }] })}>
          Add series
        </button>
      ) : null}
      <fieldset>
        <legend>Filter</legend>
        <div class="filters">
          <Field label="Filter on">
            <select
              value={form.filter.type ?? 'event'}
              onChange={(e) => {
                const type = valueOf(e) as 'event' | 'person' | 'cohort'
                // a cohort filter has its own operators and its value is an id: start it afresh
                set({ filter: type === 'cohort' ? { key: 'id', operator: 'in', value: '', type } : { key: form.filter.type === 'cohort' ? '' : form.filter.key, operator: 'exact', value: '', type } })
              }}
            >
              <option value="event">Event property</option>
              <option value="person">Person property</option>
              <option value="cohort">Cohort</option>
            </select>
          </Field>
          {form.filter.type === 'cohort' ? (
            <CohortFilter filter={form.filter} onChange={(filter) => set({ filter })} />
          ) : (
            <>
          <Field label="Filter property">
            <input list={form.filter.type === 'person' ? PERSON_PROPERTY_LIST : PROPERTY_LIST} value={form.filter.key} maxLength={400} onInput={(e) => set({ filter: { ...form.filter, key: valueOf(e) } })} />
          </Field>
          <Field label="Operator">
            <select value={form.filter.operator} onChange={(e) => set({ filter: { ...form.filter, operator: valueOf(e) } })}>
              <Options choices={OPERATORS} />
            </select>
          </Field>
          {form.filter.operator !== 'is_set' && form.filter.operator !== 'is_not_set' ? (
            <Field label="Filter value">
              <input list={FILTER_VALUE_LIST} value={form.filter.value} maxLength={400} onInput={(e) => set({ filter: { ...form.filter, value: valueOf(e) } })} />
            </Field>
          ) : null}
          <PropertyValues id={FILTER_VALUE_LIST} property={form.filter.key} type={form.filter.type === 'person' ? 'person' : 'event'} />
            </>
          )}
        </div>
      </fieldset>
      <div class="filters">
        <BreakdownType value={form.breakdownType} onChange={(breakdownType) => set({ breakdownType })} />
        <BreakdownInput value={form.breakdown} type={form.breakdownType} onChange={(breakdown) => set({ breakdown })} />
        <DateRangeSelect value={form.dateFrom} onChange={(dateFrom) => set({ dateFrom, interval: dateFrom === '-24h' ? 'hour' : form.interval })} />
        <IntervalSelect value={form.interval} onChange={(interval) => set({ interval })} />
        <label class="check">
          <input type="checkbox" checked={form.compare} onChange={(e) => set({ compare: e.currentTarget.checked })} />
          Compare to the previous period
        </label>
      </div>
    </div>
  )
}

export function FunnelBuilder(props: { form: FunnelForm; onChange: (form: FunnelForm) => void }) {
  const { form, onChange } = props
  const set = (patch: Partial<FunnelForm>) => onChange({ ...form, ...patch })
  const actions = useActions()
  // one action (or null) per step, kept beside the steps as they are added and removed
  const stepActions = form.steps.map((_, i) => form.stepActions?.[i] ?? null)
  return (
    <div class="builder">
      {form.steps.map((step, i) => (
        <fieldset key={i}>
          <legend>{`Step ${i + 1}`}</legend>
          <div class="filters">
            <EventInput value={step} byAction={Boolean(stepActions[i])} onChange={(event) => set({ steps: form.steps.map((s, j) => (j === i ? event : s)) })} />
            <ActionSelect actions={actions} value={stepActions[i]} onChange={(action) => set({ stepActions: stepActions.map((a, j) => (j === i ? action : a)) })} />
            {form.steps.length > 2 ? (
              <button type="button" onClick={() => set({ steps: form.steps.filter((_, j) => j !== i), stepActions: stepActions.filter((_, j) => j !== i) })}>
                {`Remove step ${i + 1}`}
              </button>
            ) : null}
          </div>
        </fieldset>
      ))}
      {form.steps.length < 20 ? (
        <button type="button" onClick={() => set({ steps: [...form.steps, ''], stepActions: [...stepActions, null] })}>
          Add step
        </button>
      ) : null}
      <div class="filters">
        <Field label="Conversion window">
          <input type="number" min={1} max={365} value={form.windowInterval} onInput={(e) => set({ windowInterval: Math.max(1, Math.min(365, Math.round(Number(valueOf(e))) || 1)) })} />
        </Field>
        <Field label="Window unit">
          <select value={form.windowUnit} onChange={(e) => set({ windowUnit: valueOf(e) })}>
            {WINDOW_UNITS.map((unit) => (
              <option key={unit} value={unit}>
                {`${unit}s`}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Order">
          <select value={form.order} onChange={(e) => set({ order: valueOf(e) as FunnelForm['order'] })}>
            <Options choices={ORDERS} />
          </select>
        </Field>
        <BreakdownType value={form.breakdownType ?? 'event'} onChange={(breakdownType) => set({ breakdownType })} />
        <BreakdownInput value={form.breakdown} type={form.breakdownType} onChange={(breakdown) => set({ breakdown })} />
        <DateRangeSelect value={form.dateFrom} onChange={(dateFrom) => set({ dateFrom })} />
      </div>
    </div>
  )
}

export function RetentionBuilder(props: { form: RetentionForm; onChange: (form: RetentionForm) => void }) {
  const { form, onChange } = props
  return (
    <div class="filters">
      <Field label="First event">
        <input list={EVENT_LIST} value={form.targetEvent} maxLength={400} onInput={(e) => onChange({ ...form, targetEvent: valueOf(e) })} />
      </Field>
      <Field label="Returning event">
        <input list={EVENT_LIST} value={form.returningEvent} maxLength={400} onInput={(e) => onChange({ ...form, returningEvent: valueOf(e) })} />
      </Field>
      <Field label="Period">
        <select value={form.period} onChange={(e) => onChange({ ...form, period: valueOf(e) as RetentionForm['period'] })}>
          {PERIODS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Retention type">
        <select value={form.retentionType} onChange={(e) => onChange({ ...form, retentionType: valueOf(e) })}>
          <Options choices={RETENTION_TYPES} />
        </select>
      </Field>
      <DateRangeSelect value={form.dateFrom} onChange={(dateFrom) => onChange({ ...form, dateFrom })} />
    </div>
  )
}

/** Lifecycle and stickiness ask the same: one event, a range and its interval. */
export function LifecycleBuilder(props: { form: LifecycleForm; onChange: (form: LifecycleForm) => void }) {
  const { form, onChange } = props
  return (
    <div class="filters">
      <EventInput value={form.event} onChange={(event) => onChange({ ...form, event })} />
      <DateRangeSelect value={form.dateFrom} onChange={(dateFrom) => onChange({ ...form, dateFrom, interval: dateFrom === '-24h' ? 'hour' : form.interval })} />
      <IntervalSelect value={form.interval} onChange={(interval) => onChange({ ...form, interval })} />
    </div>
  )
}
