// Property names suggested to a condition editor from the project's property definitions: a <datalist> the
// inputs name with `list`, so typing still accepts any name (a property not seen yet).
import { api, projectPath, query } from '../lib/api'
import { useAsync } from '../lib/ui'
import { useSession } from '../lib/session'
import type { Definition } from './types'

/** How many names one list offers (one page of the definitions API). */
const SUGGESTED = 200

export function PropertyNames(props: { id: string; type: 'person' | 'event' }) {
  const { projectId } = useSession()
  const names = useAsync(
    (signal) => api<{ results: Definition[] }>(projectPath(projectId, `property_definitions/${query({ type: props.type, limit: SUGGESTED })}`), { signal }),
    [projectId, props.type],
  )
  return (
    <datalist id={props.id}>
      {(names.data?.results ?? []).map((d) => (
        <option key={d.id} value={d.name} />
      ))}
    </datalist>
  )
}
