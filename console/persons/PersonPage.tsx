// One person: properties, distinct ids, recent events, and the flags /flags gives them now.
import { api, projectPath, query } from '../lib/api'
import { useState } from 'preact/hooks'
import { navigate } from '../lib/router'
import { useAction } from '../lib/forms'
import { ConfirmedButton, ErrorNote, Link, Loading, Page, PropertiesTable, time, useAsync } from '../lib/ui'
import { ListBody, Table } from '../lib/lists'
import { useSession } from '../lib/session'
import type { EventRow } from '../events/LiveEvents'
import { personName, type Person } from './Persons'

interface FlagDetail {
  enabled: boolean
  variant: string | null
  reason?: { description: string | null; code: string }
}

export function PersonPage(props: { distinctId: string }) {
  const { projectId } = useSession()
  const person = useAsync(
    (signal) => api<{ results: Person[] }>(projectPath(projectId, `persons/${query({ distinct_id: props.distinctId })}`), { signal }).then((r) => r.results[0] ?? null),
    [projectId, props.distinctId],
  )
  const ids = person.data?.distinct_ids ?? [props.distinctId]
  const events = useAsync(
    async (signal) => {
      const pages = await Promise.all(
        ids.slice(0, 5).map((id) => api<{ results: EventRow[] }>(projectPath(projectId, `events/${query({ distinct_id: id, limit: 20 })}`), { signal })),
      )
      return pages.flatMap((p) => p.results).sort((a, b) => (a.timestamp < b.timestamp ? 1 : -1)).slice(0, 20)
    },
    [projectId, ids.join('\n')],
  )
  const flags = useAsync(
    async (signal) => {
      const project = await api<{ api_token: string | null }>(projectPath(projectId, ''), { signal })
      if (!project.api_token) throw new Error('The project token is not known yet: reset it in Settings.')
      const answer = await api<{ flags: Record<string, FlagDetail> }>('/flags/?v=2', { json: { token: project.api_token, distinct_id: props.distinctId }, signal })
      return Object.entries(answer.flags ?? {})
    },
    [projectId, props.distinctId],
  )
  const [withEvents, setWithEvents] = useState(false)
  const erasing = useAction()
  const erase = (uuid: string) =>
    void erasing.run(async () => {
      await api(projectPath(projectId, `persons/${encodeURIComponent(uuid)}/${query({ delete_events: withEvents ? 'true' : undefined })}`), { method: 'DELETE' })
      navigate('/persons')
    })
  const shownAs = person.data ? personName(person.data) : props.distinctId
  return (
    <Page
      title={`Person ${shownAs}`}
      actions={
        <div class="row">
          <Link to="/persons">All persons</Link>
          <Link to={person.data ? `/replay?person_uuid=${encodeURIComponent(person.data.uuid)}` : `/replay?distinct_id=${encodeURIComponent(props.distinctId)}`}>Recordings</Link>
          {person.data ? (
            <ConfirmedButton label="Erase" name={`Erase person ${shownAs}`} title={`Erase the person ${shownAs}?`} disabled={erasing.busy} onConfirm={() => erase(person.data!.uuid)}>
              <p>Their properties, distinct ids and static cohort memberships are deleted; a later event makes a new person.</p>
              <label class="check">
                <input type="checkbox" checked={withEvents} onChange={(e) => setWithEvents(e.currentTarget.checked)} /> Also delete their events
              </label>
            </ConfirmedButton>
          ) : null}
        </div>
      }
    >
      <ErrorNote error={erasing.error} />
      {person.loading && !person.data ? <Loading what="the person" /> : null}
      <ErrorNote error={person.error} />
      {person.data === null ? <p class="muted">No person has this distinct id yet (its events may still be on their way).</p> : null}
      {person.data ? (
        <>
          <h2>Distinct IDs</h2>
          <ul>
            {person.data.distinct_ids.map((id) => (
              <li key={id} class="mono">
                {id}
              </li>
            ))}
          </ul>
          <h2>Properties</h2>
          <PropertiesTable properties={person.data.properties} caption="Person properties" />
        </>
      ) : null}
      <h2>Feature flags now</h2>
      <ErrorNote error={flags.error} />
      <ListBody state={flags} count={flags.data?.length ?? 0} what="flags" empty="The project has no active flags.">
        <Table caption="Feature flags this person gets" columns={['Flag', 'Value', 'Why']} scroll={false}>
          {(flags.data ?? []).map(([key, f]) => (
            <tr key={key}>
              <td class="mono">{key}</td>
              <td class="mono">{f.enabled ? (f.variant ?? 'true') : 'false'}</td>
              <td>{f.reason?.description ?? f.reason?.code ?? ''}</td>
            </tr>
          ))}
        </Table>
      </ListBody>
      <h2>Recent events</h2>
      <ErrorNote error={events.error} />
      {events.data && events.data.length === 0 ? <p class="muted">No events.</p> : null}
      {events.data && events.data.length > 0 ? (
        <ul class="events-list">
          {events.data.map((e) => (
            <li key={e.uuid}>
              <span class="mono">{e.event}</span> <span class="muted">{time(e.timestamp)}</span>
            </li>
          ))}
        </ul>
      ) : null}
    </Page>
  )
}
