// An action as a trends series or a funnel step: a select "Action" beside each "Event" combobox, listing the
// project's actions (one page of /api/projects/:id/actions/). Choosing one sends an ActionsNode instead of the event.
import { api, projectPath, query } from '../lib/api'
import { Field, useAsync, valueOf, type Async } from '../lib/ui'
import { useSession } from '../lib/session'
import type { ActionChoice } from './query'

export type ActionList = Async<{ results: { id: number; name: string | null }[] }>

/** The project's actions, read once by a builder and shared by its series or steps. */
export function useActions(): ActionList {
  const { projectId } = useSession()
  return useAsync((signal) => api<{ results: { id: number; name: string | null }[] }>(projectPath(projectId, `actions/${query({ limit: 200 })}`), { signal }), [projectId])
}

export function ActionSelect(props: { actions: ActionList; value: ActionChoice | null | undefined; onChange: (action: ActionChoice | null) => void }) {
  const listed = props.actions.data?.results ?? []
  const current = props.value ?? null
  const nameOf = (a: { id: number; name: string | null }) => a.name || `Action ${a.id}`
  return (
    <Field label="Action" hint="instead of the event">
      <select
        value={current ? String(current.id) : ''}
        onChange={(e) => {
          const id = Number(valueOf(e))
          const found = listed.find((a) => a.id === id)
          props.onChange(found ? { id, name: nameOf(found) } : null)
        }}
      >
        <option value="">No action</option>
        {listed.map((a) => (
          <option key={a.id} value={String(a.id)}>
            {nameOf(a)}
          </option>
        ))}
        {/* a saved insight's action that this page of the list does not hold stays chosen */}
        {current && !listed.some((a) => a.id === current.id) ? <option value={String(current.id)}>{current.name}</option> : null}
      </select>
    </Field>
  )
}
