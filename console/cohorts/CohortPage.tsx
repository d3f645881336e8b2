// A new cohort (dynamic by person-property filters, or static from a CSV of distinct ids) or an existing one with
// its members.
import { useLayoutEffect, useState } from 'preact/hooks'
import { api, projectPath } from '../lib/api'
import { navigate } from '../lib/router'
import { ConfirmedButton, ErrorNote, Field, Link, Loading, Page, useAsync, valueOf } from '../lib/ui'
import { useAction, SaveFooter } from '../lib/forms'
import { ListBody, LoadMore, usePages } from '../lib/lists'
import { personLinkId, personName, type Person } from '../persons/Persons'
import { useSession } from '../lib/session'
import type { Cohort } from './CohortList'
import { editableFilters, type Filter } from './filters'
import { PropertyNames, PropertyValues } from '../definitions/suggestions'


export function CohortPage(props: { id: string | null }) {
  const { projectId } = useSession()
  const cohort = useAsync((signal) => (props.id ? api<Cohort>(projectPath(projectId, `cohorts/${encodeURIComponent(props.id)}/`), { signal }) : Promise.resolve(null)), [projectId, props.id])
  const [name, setName] = useState('')
  const [isStatic, setIsStatic] = useState(false)
  const [filters, setFilters] = useState<Filter[]>([{ key: '', operator: 'exact', value: '' }])
  // false when the stored filters are richer than this form: then only the name is saved
  const [filtersEditable, setFiltersEditable] = useState(true)
  const [file, setFile] = useState<File | null>(null)
  const action = useAction()
  // what the last upload skipped (ids that name no person), said on the cohort's page
  const [skipped, setSkipped] = useState<{ count: number; ids: string[] } | null>(null)
  const [membersTick, setMembersTick] = useState(0)
  // a layout effect: the form takes what was loaded in the same commit that shows it, so nothing typed into it
  // first (by a quick hand, or a test) is then overwritten
  useLayoutEffect(() => {
    if (pendingSkipped) {
      setSkipped(pendingSkipped)
      pendingSkipped = null
    }
  }, [props.id])
  useLayoutEffect(() => {
    if (!cohort.data) return
    setName(cohort.data.name)
    setIsStatic(cohort.data.is_static)
    if (!cohort.data.is_static) {
      const editable = editableFilters(cohort.data)
      setFiltersEditable(editable !== null)
      if (editable) setFilters(editable)
    }
  }, [cohort.data])

  const save = (event: Event) => {
    event.preventDefault()
    void action.run(async () => {
      const path = props.id ? projectPath(projectId, `cohorts/${encodeURIComponent(props.id)}/`) : projectPath(projectId, 'cohorts/')
      const method = props.id ? 'PATCH' : 'POST'
      let answer: Cohort
      if (isStatic) {
        const form = new FormData()
        form.set('name', name)
        form.set('is_static', 'true')
        if (file) form.set('csv', file, file.name)
        else if (!props.id) throw new Error('Choose a CSV file of distinct ids to upload.')
        answer = await api<Cohort>(path, { method, body: form })
        setSkipped(answer.csv_skipped && answer.csv_skipped.count > 0 ? answer.csv_skipped : null)
      } else {
        const values = filters.filter((f) => f.key.trim()).map((f) => ({ key: f.key.trim(), operator: f.operator, value: f.value, type: 'person' }))
        const body = filtersEditable ? { name, filters: { properties: { type: 'OR', values: [{ type: 'AND', values }] } } } : { name }
        answer = await api<Cohort>(path, { method, json: body })
      }
      if (!props.id) {
        // a new cohort opens on its own page, saying what its upload skipped
        pendingSkipped = answer.csv_skipped && answer.csv_skipped.count > 0 ? answer.csv_skipped : null
        return navigate(`/cohorts/${answer.id}`)
      }
      cohort.reload()
      setMembersTick((t) => t + 1)
      setFile(null)
      return true
    })
  }
  const remove = () =>
    void action.run(async () => {
      // as PostHog: a cohort is deleted with PATCH {"deleted": true}
      await api(projectPath(projectId, `cohorts/${encodeURIComponent(props.id!)}/`), { method: 'PATCH', json: { deleted: true } })
      navigate('/cohorts')
    })
  if (props.id && cohort.loading && !cohort.data) return <Loading what="the cohort" />
  if (props.id && cohort.error && !cohort.data) return <ErrorNote error={cohort.error} />
  return (
    <Page
      title={cohort.data ? `Cohort ${cohort.data.name}` : 'New cohort'}
      actions={
        <div class="row">
          <Link to="/cohorts">All cohorts</Link>
          {cohort.data ? (
            <ConfirmedButton label="Delete" name={`Delete cohort ${cohort.data.name}`} title={`Delete the cohort ${cohort.data.name}?`} disabled={action.busy} onConfirm={remove}>
              <p>Flags that use it must stop using it first (the server refuses otherwise).</p>
            </ConfirmedButton>
          ) : null}
        </div>
      }
    >
      <form onSubmit={save} class="stack" aria-label="Cohort">
        <Field label="Name">
          <input required value={name} onInput={(e) => setName(valueOf(e))} />
        </Field>
        <fieldset disabled={Boolean(props.id)}>
          <legend>Type</legend>
          <label class="check">
            <input type="radio" name="kind" checked={!isStatic} onChange={() => setIsStatic(false)} /> Dynamic (person properties)
          </label>
          <label class="check">
            <input type="radio" name="kind" checked={isStatic} onChange={() => setIsStatic(true)} /> Static (a list of distinct ids)
          </label>
        </fieldset>
        {isStatic ? (
          <Field label="Upload CSV" hint="one distinct id per line (a first row person_id or email says the ids are person ids or emails); ids that name no person are skipped and listed">
            <input type="file" accept=".csv,text/csv,text/plain" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
          </Field>
        ) : !filtersEditable ? (
          <div>
            <p class="muted small">These filters are richer than this form (groups, nested cohorts or behaviour): they are kept as they are. Change them through the API.</p>
            <pre class="snippet">{JSON.stringify(cohort.data?.filters ?? {}, null, 2)}</pre>
          </div>
        ) : (
          <fieldset>
            <legend>Persons whose properties match all of</legend>
            <PropertyNames id="person-property-names" type="person" />
            {filters.map((f, i) => (
              <div class="row" role="group" aria-label={`Filter ${i + 1}`} key={i}>
                <Field label="Person property">
                  <input list="person-property-names" value={f.key} onInput={(e) => setFilters(filters.map((x, j) => (j === i ? { ...x, key: valueOf(e) } : x)))} />
                </Field>
                <Field label="Operator">
                  <select value={f.operator} onChange={(e) => setFilters(filters.map((x, j) => (j === i ? { ...x, operator: valueOf(e) } : x)))}>
                    <option value="exact">equals</option>
                    <option value="is_not">does not equal</option>
                    <option value="icontains">contains</option>
                    <option value="regex">matches regex</option>
                    <option value="gt">greater than</option>
                    <option value="lt">less than</option>
                    <option value="is_set">is set</option>
                  </select>
                </Field>
                <Field label="Value">
                  <input list={`cohort-values-${i}`} value={f.value} onInput={(e) => setFilters(filters.map((x, j) => (j === i ? { ...x, value: valueOf(e) } : x)))} />
                </Field>
                <PropertyValues id={`cohort-values-${i}`} property={f.key} type="person" />
                <button type="button" onClick={() => setFilters(filters.filter((_, j) => j !== i))}>
                  Remove filter {i + 1}
                </button>
              </div>
            ))}
            <button type="button" onClick={() => setFilters([...filters, { key: '', operator: 'exact', value: '' }])}>
              Add filter
            </button>
          </fieldset>
        )}
        <SaveFooter action={action} />
      </form>
      {skipped ? <SkippedIds skipped={skipped} /> : null}
      {props.id ? <Members projectId={projectId} cohortId={props.id} tick={membersTick} count={cohort.data?.count ?? null} /> : null}
    </Page>
  )
}

/** Carried from a new cohort's form to its page (the page is a new component after navigate). */
let pendingSkipped: { count: number; ids: string[] } | null = null

/** The ids of the last upload that named no person: they were not added. */
function SkippedIds(props: { skipped: { count: number; ids: string[] } }) {
  const { count, ids } = props.skipped
  return (
    <section class="notice" aria-live="polite" aria-labelledby="skipped-title">
      <h2 id="skipped-title">
        {count} {count === 1 ? 'id' : 'ids'} of the CSV skipped
      </h2>
      <p class="muted small">They name no person of this project (yet), so they were not added{count > ids.length ? `; the first ${ids.length} are listed` : ''}.</p>
      <ul class="members">
        {ids.map((id, i) => (
          <li key={i} class="mono">
            {id}
          </li>
        ))}
      </ul>
    </section>
  )
}

function Members(props: { projectId: number; cohortId: string; tick: number; count: number | null }) {
  const path = projectPath(props.projectId, `cohorts/${encodeURIComponent(props.cohortId)}/persons/?limit=100`)
  const members = usePages<Person>(path, (p) => p.uuid, [path, props.tick])
  const rows = members.items
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members{props.count !== null ? ` (${props.count})` : ''}</h2>
      <ErrorNote error={members.error} />
      <ListBody state={members} count={rows.length} what="members" empty="No members.">
        <ul class="members">
          {rows.map((p) => (
            <li key={p.uuid}>
              <Link to={`/persons/${encodeURIComponent(personLinkId(p))}`}>{personName(p)}</Link>
            </li>
          ))}
        </ul>
      </ListBody>
      <LoadMore pages={members} what="members" />
    </section>
  )
}
