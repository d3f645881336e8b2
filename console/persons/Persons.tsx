// Persons, newest first, page by page; found by a distinct id or a part of the email (`search`) or by a person
// property's value (`properties`), and shown by their email or identified id rather than their first anonymous id.
import { useState } from 'preact/hooks'
import { projectPath, query } from '../lib/api'
import { ErrorNote, Field, Link, Page, time, valueOf } from '../lib/ui'
import { ListBody, LoadMore, Table, usePages } from '../lib/lists'
import { useSession } from '../lib/session'
import { PropertyNames } from '../definitions/suggestions'

export interface Person {
  id: string
  uuid: string
  distinct_ids: string[]
  properties: Record<string, unknown>
  is_identified?: boolean
  created_at: string | null
}

const PAGE = 50

/** How a person is named: their email, else an identified (non-UUID-looking) distinct id, else their first id. */
export function personName(person: Pick<Person, 'distinct_ids' | 'properties' | 'uuid'>): string {
  const email = person.properties?.email
  if (typeof email === 'string' && email.trim()) return email
  const anonymous = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i
  const identified = person.distinct_ids.find((id) => !anonymous.test(id))
  return identified ?? person.distinct_ids[0] ?? person.uuid
}

/** The id a person's page is opened by: the one they are named by when it is one of their ids. */
export function personLinkId(person: Pick<Person, 'distinct_ids' | 'properties' | 'uuid'>): string {
  const name = personName(person)
  return person.distinct_ids.includes(name) ? name : (person.distinct_ids[0] ?? '')
}

export function Persons() {
  const { projectId } = useSession()
  const [form, setForm] = useState({ search: '', key: '', value: '' })
  const [submitted, setSubmitted] = useState(form)
  const properties = submitted.key.trim() ? JSON.stringify([{ key: submitted.key.trim(), value: submitted.value, operator: 'exact', type: 'person' }]) : undefined
  const path = projectPath(projectId, `persons/${query({ search: submitted.search.trim(), properties, limit: PAGE })}`)
  const persons = usePages<Person>(path, (p) => p.uuid, [path])
  const filtered = Boolean(submitted.search.trim() || properties)
  return (
    <Page title="Persons">
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault()
          setSubmitted(form)
        }}
      >
        <Field label="Search" hint="a distinct id, or a part of the email">
          <input type="search" maxLength={200} value={form.search} onInput={(e) => setForm({ ...form, search: valueOf(e) })} />
        </Field>
        <Field label="Person property">
          <input list="person-property-names" maxLength={400} value={form.key} onInput={(e) => setForm({ ...form, key: valueOf(e) })} />
        </Field>
        <Field label="Property value">
          <input maxLength={1000} value={form.value} onInput={(e) => setForm({ ...form, value: valueOf(e) })} />
        </Field>
        <button type="submit">Find</button>
      </form>
      <PropertyNames id="person-property-names" type="person" />
      <ErrorNote error={persons.error} />
      <ListBody state={persons} count={persons.items.length} what="persons" empty={filtered ? 'No person matches.' : 'No persons yet.'}>
        <Table caption="Persons" columns={['Person', 'Distinct IDs', 'Created']}>
          {persons.items.map((p) => (
            <tr key={p.uuid}>
              <td>
                <Link to={`/persons/${encodeURIComponent(personLinkId(p))}`}>{personName(p)}</Link>
              </td>
              <td class="mono small">
                {p.distinct_ids.slice(0, 3).join(', ')}
                {p.distinct_ids.length > 3 ? ` and ${p.distinct_ids.length - 3} more` : ''}
              </td>
              <td>{time(p.created_at)}</td>
            </tr>
          ))}
        </Table>
      </ListBody>
      <LoadMore pages={persons} what="persons" />
    </Page>
  )
}
