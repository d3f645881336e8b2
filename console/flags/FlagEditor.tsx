// A flag's page (or a new flag): key, name, release conditions, variants, payloads, Save; its history and the
// test box that asks /flags what a user gets and why.
import { useLayoutEffect, useState } from 'preact/hooks'
import { api, projectPath } from '../lib/api'
import { navigate } from '../lib/router'
import { ConfirmedButton, ErrorNote, Field, Link, Loading, Page, useAsync, valueOf } from '../lib/ui'
import { useAction, SaveFooter } from '../lib/forms'
import { useSession } from '../lib/session'
import { ConditionEditor } from './ConditionEditor'
import { FlagTest } from './FlagTest'
import { FlagHistory } from './FlagHistory'
import { PropertyNames } from '../definitions/suggestions'
import type { Condition, Flag, Variant } from './types'

export interface Draft {
  key: string
  name: string
  active: boolean
  groups: Condition[]
  variants: Variant[]
  /** payload text by "true" or variant key */
  payloads: Record<string, string>
  /** the rest of the stored filters (group aggregation, …), kept as they are */
  otherFilters: Record<string, unknown>
}

const EMPTY: Draft = { key: '', name: '', active: true, groups: [{ properties: [], rollout_percentage: 100 }], variants: [], payloads: {}, otherFilters: {} }

function draftOf(flag: Flag): Draft {
  const payloads: Record<string, string> = {}
  for (const [k, v] of Object.entries(flag.filters.payloads ?? {})) payloads[k] = typeof v === 'string' ? v : JSON.stringify(v)
  const { groups: _groups, multivariate: _multivariate, payloads: _payloads, ...otherFilters } = flag.filters
  return {
    otherFilters,
    key: flag.key,
    name: flag.name,
    active: flag.active,
    groups: (flag.filters.groups ?? []).map((g) => ({ ...g, properties: g.properties ?? [] })),
    variants: flag.filters.multivariate?.variants ?? [],
    payloads,
  }
}

/**
 * A new variant. Turning a boolean flag multivariate hands its payload to the first variant (it was dropped on
 * save before, without a word); the "true" payload is kept in the draft too, should the variants go again.
 */
export function withVariantAdded(draft: Draft): Draft {
  const key = `variant-${draft.variants.length + 1}`
  const payloads = { ...draft.payloads }
  if (draft.variants.length === 0 && payloads.true?.trim() && !payloads[key]?.trim()) payloads[key] = payloads.true
  return { ...draft, variants: [...draft.variants, { key, rollout_percentage: draft.variants.length === 0 ? 100 : 0 }], payloads }
}

function bodyOf(draft: Draft) {
  const payloadKeys = draft.variants.length ? draft.variants.map((v) => v.key) : ['true']
  const payloads: Record<string, string> = {}
  for (const k of payloadKeys) if (draft.payloads[k]?.trim()) payloads[k] = draft.payloads[k].trim()
  return {
    key: draft.key.trim(),
    name: draft.name,
    active: draft.active,
    filters: {
      ...draft.otherFilters,
      groups: draft.groups.map((g) => ({ ...g, variant: draft.variants.length ? (g.variant ?? null) : null })),
      multivariate: draft.variants.length ? { variants: draft.variants } : null,
      payloads,
    },
  }
}

export function FlagEditor(props: { id: string | null }) {
  const { projectId } = useSession()
  const flag = useAsync((signal) => (props.id ? api<Flag>(projectPath(projectId, `feature_flags/${encodeURIComponent(props.id)}/`), { signal }) : Promise.resolve(null)), [projectId, props.id])
  const others = useAsync((signal) => api<{ results: Flag[] }>(projectPath(projectId, 'feature_flags/?limit=500'), { signal }), [projectId])
  const cohorts = useAsync((signal) => api<{ results: { id: number; name: string }[] }>(projectPath(projectId, 'cohorts/?limit=500'), { signal }), [projectId])
  const [draft, setDraft] = useState<Draft>(EMPTY)
  const action = useAction()
  // a layout effect: the form takes what was loaded in the same commit that shows it, so nothing typed into it
  // first (by a quick hand, or a test) is then overwritten
  useLayoutEffect(() => {
    if (flag.data) setDraft(draftOf(flag.data))
  }, [flag.data])

  const save = (event: Event) => {
    event.preventDefault()
    void action.run(async () => {
      if (!props.id) {
        const created = await api<Flag>(projectPath(projectId, 'feature_flags/'), { json: bodyOf(draft) })
        return navigate(`/flags/${created.id}`)
      }
      await api(projectPath(projectId, `feature_flags/${encodeURIComponent(props.id)}/`), { method: 'PATCH', json: bodyOf(draft) })
      flag.reload()
      return true
    })
  }
  const remove = () =>
    void action.run(async () => {
      // as PostHog: a flag is deleted with PATCH {"deleted": true} (its history stays)
      await api(projectPath(projectId, `feature_flags/${encodeURIComponent(props.id!)}/`), { method: 'PATCH', json: { deleted: true } })
      navigate('/flags')
    })
  if (props.id && flag.loading && !flag.data) return <Loading what="the flag" />
  if (props.id && flag.error && !flag.data) return <ErrorNote error={flag.error} />
  // an edit makes the last refusal stale (a payload fixed since): it is cleared rather than left on screen
  const edit = (change: (d: Draft) => Draft) => {
    if (action.error || action.done) action.reset()
    setDraft(change)
  }
  const set = (patch: Partial<Draft>) => edit((d) => ({ ...d, ...patch }))
  const variantKeys = draft.variants.map((v) => v.key).filter(Boolean)
  const flagChoices = (others.data?.results ?? []).filter((f) => String(f.id) !== props.id).map((f) => ({ id: f.id, label: f.key }))
  const cohortChoices = (cohorts.data?.results ?? []).map((c) => ({ id: c.id, label: c.name || `Cohort ${c.id}` }))
  const current = flag.data
  return (
    <Page
      title={current ? `Feature flag ${current.key}` : 'New feature flag'}
      actions={
        <div class="row">
          <Link to="/flags">All flags</Link>
          {current ? (
            <ConfirmedButton label="Delete" name={`Delete feature flag ${current.key}`} title={`Delete the feature flag ${current.key}?`} disabled={action.busy} onConfirm={remove}>
              <p>/decide stops answering it at once; its key becomes free and its history stays.</p>
            </ConfirmedButton>
          ) : null}
        </div>
      }
    >
      <form onSubmit={save} class="stack" aria-label="Feature flag">
        <div class="row">
          <Field label="Key" hint="letters, digits, - and _">
            <input required value={draft.key} onInput={(e) => set({ key: valueOf(e) })} pattern="[A-Za-z0-9_\-]+" />
          </Field>
          <Field label="Name">
            <input value={draft.name} onInput={(e) => set({ name: valueOf(e) })} />
          </Field>
          <label class="check">
            <input type="checkbox" role="switch" checked={draft.active} onChange={(e) => set({ active: e.currentTarget.checked })} /> Enabled
          </label>
        </div>
        <h2>Release conditions</h2>
        <PropertyNames id="person-property-names" type="person" />
        {draft.groups.map((g, i) => (
          <ConditionEditor
            key={i}
            index={i}
            condition={g}
            variants={variantKeys}
            cohorts={cohortChoices}
            flags={flagChoices}
            onChange={(c) => set({ groups: draft.groups.map((x, j) => (j === i ? c : x)) })}
            onRemove={draft.groups.length > 1 ? () => set({ groups: draft.groups.filter((_, j) => j !== i) }) : undefined}
          />
        ))}
        <button type="button" onClick={() => set({ groups: [...draft.groups, { properties: [], rollout_percentage: 100 }] })}>
          Add condition set
        </button>
        <h2>Variants</h2>
        {draft.variants.length === 0 ? <p class="muted small">A boolean flag. Add variants for a multivariate one (their percentages sum to 100).</p> : null}
        {draft.variants.map((v, i) => (
          <div class="row" role="group" aria-label={`Variant ${i + 1}`} key={i}>
            <Field label="Variant key">
              <input value={v.key} onInput={(e) => set({ variants: draft.variants.map((x, j) => (j === i ? { ...x, key: valueOf(e) } : x)) })} />
            </Field>
            <Field label="Variant percentage">
              <input
                type="number"
                min={0}
                max={100}
                value={v.rollout_percentage}
                onInput={(e) => set({ variants: draft.variants.map((x, j) => (j === i ? { ...x, rollout_percentage: Number(valueOf(e)) } : x)) })}
              />
            </Field>
            <button type="button" onClick={() => set({ variants: draft.variants.filter((_, j) => j !== i) })}>
              Remove variant {i + 1}
            </button>
          </div>
        ))}
        <button type="button" onClick={() => edit(withVariantAdded)}>
          Add variant
        </button>
        <h2>Payloads</h2>
        {(variantKeys.length ? variantKeys : ['true']).map((k) => (
          <Field label={variantKeys.length ? `Payload for ${k}` : 'Payload'} hint="JSON, optional" key={k}>
            <textarea rows={2} value={draft.payloads[k] ?? ''} onInput={(e) => set({ payloads: { ...draft.payloads, [k]: valueOf(e) } })} />
          </Field>
        ))}
        <SaveFooter action={action} />
      </form>
      {current ? (
        <>
          <FlagHistory projectId={projectId} flag={current} version={current.version} />
          <FlagTest flagKey={current.key} />
        </>
      ) : null}
    </Page>
  )
}
