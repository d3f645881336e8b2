// One release condition: its filters (person properties, cohorts, other flags) and its rollout percentage.
import { PropertyValues } from '../definitions/suggestions'
import { Field, Options, valueOf } from '../lib/ui'
import { OPERATORS, type Condition, type FlagProperty } from './types'

export interface Choice {
  id: number
  label: string
}


function blankFilter(type: string): FlagProperty {
  if (type === 'cohort') return { key: 'id', type: 'cohort', value: '' }
  if (type === 'flag') return { key: '', type: 'flag', operator: 'flag_evaluates_to', value: true }
  return { key: '', type: 'person', operator: 'exact', value: '' }
}

export function ConditionEditor(props: {
  index: number
  condition: Condition
  variants: string[]
  cohorts: Choice[]
  flags: Choice[]
  onChange: (condition: Condition) => void
  onRemove?: () => void
}) {
  const { condition, index } = props
  const n = index + 1
  const setFilter = (i: number, filter: FlagProperty) => props.onChange({ ...condition, properties: condition.properties.map((p, j) => (j === i ? filter : p)) })
  const removeFilter = (i: number) => props.onChange({ ...condition, properties: condition.properties.filter((_, j) => j !== i) })
  const addFilter = (type: string) => props.onChange({ ...condition, properties: [...condition.properties, blankFilter(type)] })
  return (
    <fieldset class="condition">
      <legend>Condition set {n}</legend>
      {condition.properties.length === 0 ? <p class="muted small">Matches every user.</p> : null}
      {condition.properties.map((filter, i) => (
        <div class="filter row" key={i} role="group" aria-label={`Filter ${i + 1} of condition set ${n}`}>
          {filter.type === 'cohort' ? (
            <Field label="Cohort">
              <select value={String(filter.value ?? '')} onChange={(e) => setFilter(i, { ...filter, value: Number(valueOf(e)) || valueOf(e) })}>
                <option value="">Choose a cohort</option>
                {props.cohorts.map((c) => (
                  <option key={c.id} value={String(c.id)}>
                    {c.label}
                  </option>
                ))}
              </select>
            </Field>
          ) : filter.type === 'flag' ? (
            <>
              <Field label="Depends on flag">
                <select value={filter.key} onChange={(e) => setFilter(i, { ...filter, key: valueOf(e) })}>
                  <option value="">Choose a flag</option>
                  {props.flags.map((f) => (
                    <option key={f.id} value={String(f.id)}>
                      {f.label}
                    </option>
                  ))}
                </select>
              </Field>
              <Field label="Evaluates to">
                <input
                  value={valueOfDependency(filter.value)}
                  onInput={(e) => {
                    const v = valueOf(e)
                    setFilter(i, { ...filter, value: v === 'true' ? true : v === 'false' ? false : v })
                  }}
                />
              </Field>
            </>
          ) : (
            <>
              <Field label="Person property">
                <input list="person-property-names" value={filter.key} onInput={(e) => setFilter(i, { ...filter, key: valueOf(e) })} />
              </Field>
              <Field label="Operator">
                <select value={filter.operator ?? 'exact'} onChange={(e) => setFilter(i, { ...filter, operator: valueOf(e) })}>
                  <Options choices={OPERATORS} />
                </select>
              </Field>
              {filter.operator === 'is_set' || filter.operator === 'is_not_set' ? null : (
                <>
                  <Field label="Value">
                    <input
                      list={`person-values-${n}-${i}`}
                      value={Array.isArray(filter.value) ? filter.value.join(', ') : String(filter.value ?? '')}
                      onInput={(e) => setFilter(i, { ...filter, value: valueOf(e) })}
                    />
                  </Field>
                  <PropertyValues id={`person-values-${n}-${i}`} property={filter.key} type="person" />
                </>
              )}
            </>
          )}
          <button type="button" onClick={() => removeFilter(i)} aria-label={`Remove filter ${i + 1} of condition set ${n}`}>
            Remove
          </button>
        </div>
      ))}
      <div class="row">
        <button type="button" onClick={() => addFilter('person')}>
          Add person property filter
        </button>
        <button type="button" onClick={() => addFilter('cohort')}>
          Add cohort filter
        </button>
        <button type="button" onClick={() => addFilter('flag')}>
          Add flag dependency
        </button>
      </div>
      <div class="row">
        <Field label="Rollout percentage">
          <input
            type="number"
            min={0}
            max={100}
            step="any"
            value={condition.rollout_percentage ?? 100}
            onInput={(e) => props.onChange({ ...condition, rollout_percentage: valueOf(e) === '' ? null : Number(valueOf(e)) })}
          />
        </Field>
        {props.variants.length > 0 ? (
          <Field label="Variant override">
            <select value={condition.variant ?? ''} onChange={(e) => props.onChange({ ...condition, variant: valueOf(e) || null })}>
              <option value="">By variant split</option>
              {props.variants.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </Field>
        ) : null}
        {props.onRemove ? (
          <button type="button" onClick={props.onRemove}>
            Remove condition set {n}
          </button>
        ) : null}
      </div>
    </fieldset>
  )
}

function valueOfDependency(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? true)
}
