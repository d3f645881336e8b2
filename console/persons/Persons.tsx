import { useState } from 'preact/hooks'
import { api, projectPath, query } from '../lib/api'
import { ErrorNote, Field, Link, Page, time, useAsync, valueOf } from '../lib/ui'
import { ListBody, Table } from '../lib/lists'
import { useSession } from '../lib/session'

export interface Person {
  id: string
  uuid: string
  distinct_ids: string[]
  properties: Record<string, unknown>
  created_at: string | null
}

export function Persons() {
  const { projectId } = useSession()
  const [search, setSearch] = useState('')
  const [submitted, setSubmitted] = useState('')
  const persons = useAsync(
    (signal) => api<{ results: Person[] }>(projectPath(projectId, `persons/${query({ distinct_id: submitted.trim(), limit: 50 })}`), { signal }),
    [projectId, submitted],
  )
  const rows = persons.data?.results ?? []
  return (
    <Page title="Persons">
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault()
          setSubmitted(search)
        }}
      >
        <Field label="Search" hint="a distinct id">
          <input type="search" value={search} onInput={(e) => setSearch(valueOf(e))} />
        </Field>
        <button type="submit">Find</button>
      </form>
      <ErrorNote error={persons.error} />
      <ListBody state={persons} count={rows.length} what="persons" empty={submitted ? 'No person has this distinct id.' : 'No persons yet.'}>
        <Table caption="Persons" columns={['Distinct ID', 'Email', 'Created']}>
          {rows.map((p) => (
            <tr key={p.uuid}>
              <td class="mono">
                <Link to={`/persons/${encodeURIComponent(p.distinct_ids[0] ?? '')}`}>{p.distinct_ids[0] ?? p.uuid}</Link>
              </td>
              <td>{typeof p.properties.email === 'string' ? p.properties.email : ''}</td>
              <td>{time(p.created_at)}</td>
            </tr>
          ))}
        </Table>
      </ListBody>
    </Page>
  )
}
