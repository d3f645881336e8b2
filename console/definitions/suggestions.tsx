// Property names (from the project's property definitions) and event property values (the most frequent recent
// ones) suggested to a condition editor: a <datalist> the inputs name with `list`, so typing still accepts anything.
import { useEffect, useRef, useState } from 'preact/hooks'
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

/** How long the property name must stay unchanged before its values are asked for. */
const VALUES_DEBOUNCE_MS = 300

/**
 * The recent values of one event property (`events/values`), asked for once the name has stopped changing, with at
 * most one request in flight: a name typed meanwhile is asked for when the running request ends.
 */
export function PropertyValues(props: { id: string; property: string; type?: 'event' | 'person' }) {
  const { projectId } = useSession()
  const [values, setValues] = useState<string[]>([])
  const wanted = useRef<string | null>(null)
  const inFlight = useRef(false)
  const mounted = useRef(true)
  useEffect(() => () => void (mounted.current = false), [])

  const askForWanted = async () => {
    while (!inFlight.current && mounted.current && wanted.current !== null) {
      const path = wanted.current
      inFlight.current = true
      // a refused or failed request only means no suggestions: the input takes any value
      const answer = await api<{ name: string }[]>(path).catch(() => [])
      inFlight.current = false
      if (wanted.current === path) {
        wanted.current = null
        if (mounted.current) setValues(answer.map((v) => v.name))
      }
    }
  }

  useEffect(() => {
    const key = props.property.trim()
    if (key === '') {
      wanted.current = null
      setValues([])
      return
    }
    const timer = setTimeout(() => {
      wanted.current = projectPath(projectId, `${props.type === 'person' ? 'persons' : 'events'}/values/${query({ key })}`)
      void askForWanted()
    }, VALUES_DEBOUNCE_MS)
    return () => clearTimeout(timer)
  }, [projectId, props.property, props.type])

  return (
    <datalist id={props.id}>
      {values.map((v) => (
        <option key={v} value={v} />
      ))}
    </datalist>
  )
}
