import { useLayoutEffect, useState } from 'preact/hooks'
import { api, projectPath } from '../lib/api'
import { ErrorNote, Field, Link, Loading, Page, time, useAsync, valueOf } from '../lib/ui'
import { useAction, SaveFooter } from '../lib/forms'
import { useSession } from '../lib/session'
import { KINDS, PROPERTY_TYPES, type Definition, type DefinitionKind } from './types'

export function DefinitionPage(props: { kind: DefinitionKind; id: string }) {
  const { projectId } = useSession()
  const kind = KINDS[props.kind]
  const path = projectPath(projectId, `${kind.api}/${encodeURIComponent(props.id)}/`)
  const definition = useAsync((signal) => api<Definition>(path, { signal }), [path])
  const [description, setDescription] = useState('')
  const [tags, setTags] = useState('')
  const [verified, setVerified] = useState(false)
  const [hidden, setHidden] = useState(false)
  const [propertyType, setPropertyType] = useState('')
  const action = useAction()
  // a layout effect: the form takes what was loaded in the same commit that shows it, so nothing typed into it
  // first (by a quick hand, or a test) is then overwritten
  useLayoutEffect(() => {
    const d = definition.data
    if (!d) return
    setDescription(d.description)
    setTags(d.tags.join(', '))
    setVerified(d.verified)
    setHidden(d.hidden)
    setPropertyType(d.property_type ?? '')
  }, [definition.data])

  const save = (event: Event) => {
    event.preventDefault()
    void action.run(async () => {
      const body: Record<string, unknown> = {
        description,
        tags: tags.split(',').map((t) => t.trim()).filter(Boolean),
        verified,
        hidden,
      }
      if (props.kind === 'property' && propertyType) body.property_type = propertyType
      await api(path, { method: 'PATCH', json: body })
      definition.reload()
      return true
    })
  }
  if (definition.loading && !definition.data) return <Loading what="the definition" />
  if (!definition.data) return <ErrorNote error={definition.error} />
  const d = definition.data
  return (
    <Page title={`${kind.one} ${d.name}`} actions={<Link to={kind.path}>All {kind.title.toLowerCase()}</Link>}>
      <p class="muted small">
        {d.created_at ? `First seen ${time(d.created_at)}. ` : ''}
        {d.last_seen_at ? `Last seen ${time(d.last_seen_at)}.` : ''}
        {d.verified_by ? ` Verified by ${d.verified_by.email}.` : ''}
      </p>
      <form onSubmit={save} class="stack" aria-label="Definition">
        <Field label="Description">
          <textarea rows={3} value={description} onInput={(e) => setDescription(valueOf(e))} />
        </Field>
        <Field label="Tags" hint="separated by commas">
          <input value={tags} onInput={(e) => setTags(valueOf(e))} />
        </Field>
        {props.kind === 'property' ? (
          <Field label="Property type">
            <select value={propertyType} onChange={(e) => setPropertyType(valueOf(e))}>
              <option value="">Not set</option>
              {PROPERTY_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </Field>
        ) : null}
        <label class="check">
          <input
            type="checkbox"
            checked={verified}
            onChange={(e) => {
              setVerified(e.currentTarget.checked)
              if (e.currentTarget.checked) setHidden(false)
            }}
          />{' '}
          Verified
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={hidden}
            onChange={(e) => {
              setHidden(e.currentTarget.checked)
              if (e.currentTarget.checked) setVerified(false)
            }}
          />{' '}
          Hidden
        </label>
        <SaveFooter action={action} />
      </form>
    </Page>
  )
}
