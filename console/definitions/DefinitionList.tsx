import { useState } from 'preact/hooks'
import { api, projectPath, query } from '../lib/api'
import { ErrorNote, Field, Link, Page, time, useAsync, valueOf } from '../lib/ui'
import { ListBody, Table } from '../lib/lists'
import { useSession } from '../lib/session'
import { KINDS, type Definition, type DefinitionKind } from './types'

const PAGE = 100

export function DefinitionList(props: { kind: DefinitionKind }) {
  const { projectId } = useSession()
  const kind = KINDS[props.kind]
  const [search, setSearch] = useState('')
  const [offset, setOffset] = useState(0)
  // property definitions are of events' properties or of persons' (the API's `type`)
  const [propertyType, setPropertyType] = useState<'event' | 'person'>('event')
  const type = props.kind === 'property' ? propertyType : undefined
  const list = useAsync(
    (signal) => api<{ count: number; results: Definition[] }>(projectPath(projectId, `${kind.api}/${query({ search: search.trim(), type, limit: PAGE, offset })}`), { signal }),
    [projectId, props.kind, search, offset, type],
  )
  const rows = list.data?.results ?? []
  return (
    <Page title={kind.title}>
      <Field label="Search">
        <input
          type="search"
          value={search}
          onInput={(e) => {
            setSearch(valueOf(e))
            setOffset(0)
          }}
        />
      </Field>
      {props.kind === 'property' ? (
        <Field label="Properties of">
          <select
            value={propertyType}
            onChange={(e) => {
              setPropertyType(valueOf(e) === 'person' ? 'person' : 'event')
              setOffset(0)
            }}
          >
            <option value="event">Events</option>
            <option value="person">Persons</option>
          </select>
        </Field>
      ) : null}
      <ErrorNote error={list.error} />
      <ListBody state={list} count={rows.length} what="definitions" empty={`No ${kind.one.toLowerCase()} definitions${search ? ' match' : ' yet'}.`}>
        <Table caption={kind.title} columns={['Name', props.kind === 'property' && 'Type', 'Description', 'Tags', 'Status', props.kind === 'event' && 'Last seen']}>
          {rows.map((d) => (
            <tr key={d.id}>
              <td class="mono">
                <Link to={`${kind.path}/${d.id}`}>{d.name}</Link>
              </td>
              {props.kind === 'property' ? <td>{d.property_type ?? '—'}</td> : null}
              <td>{d.description}</td>
              <td>{d.tags.join(', ')}</td>
              <td>{[d.verified ? 'verified' : '', d.hidden ? 'hidden' : ''].filter(Boolean).join(', ')}</td>
              {props.kind === 'event' ? <td>{time(d.last_seen_at)}</td> : null}
            </tr>
          ))}
        </Table>
      </ListBody>
      {list.data && list.data.count > PAGE ? (
        <div class="row">
          <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
            Previous page
          </button>
          <span class="muted">
            {offset + 1}–{Math.min(offset + PAGE, list.data.count)} of {list.data.count}
          </span>
          <button type="button" disabled={offset + PAGE >= list.data.count} onClick={() => setOffset(offset + PAGE)}>
            Next page
          </button>
        </div>
      ) : null}
    </Page>
  )
}
