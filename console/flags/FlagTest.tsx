// What /flags (the endpoint SDKs call) answers for a distinct id, and why.
import { useState } from 'preact/hooks'
import { api, projectPath } from '../lib/api'
import { ErrorNote, Field, valueOf } from '../lib/ui'
import { useSession } from '../lib/session'

interface FlagDetail {
  enabled: boolean
  variant: string | null
  reason?: { code: string; condition_index: number | null; description: string | null }
  metadata?: { payload: unknown }
}

export function FlagTest(props: { flagKey: string }) {
  const { projectId } = useSession()
  const [distinctId, setDistinctId] = useState('')
  const [properties, setProperties] = useState('')
  const [answer, setAnswer] = useState<FlagDetail | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const test = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    setAnswer(null)
    try {
      let personProperties: Record<string, unknown> = {}
      if (properties.trim()) {
        try {
          personProperties = JSON.parse(properties)
        } catch {
          throw new Error('Person properties must be a JSON object, e.g. {"email": "a@b.c"}.')
        }
      }
      const project = await api<{ api_token: string | null }>(projectPath(projectId, ''))
      if (!project.api_token) throw new Error('The project token is not known yet: reset it in Settings.')
      const result = await api<{ flags: Record<string, FlagDetail> }>('/flags/?v=2', {
        json: { token: project.api_token, distinct_id: distinctId, person_properties: personProperties },
      })
      const detail = result.flags?.[props.flagKey]
      if (!detail) throw new Error('The flag is not in the answer (is it deleted?).')
      setAnswer(detail)
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  const value = answer ? (answer.enabled ? (answer.variant ?? 'true') : 'false') : null
  return (
    <section aria-labelledby="test-title">
      <h2 id="test-title">Test this flag</h2>
      <form onSubmit={test} class="row" aria-label="Test this flag">
        <Field label="Distinct ID">
          <input required value={distinctId} onInput={(e) => setDistinctId(valueOf(e))} />
        </Field>
        <Field label="Person properties" hint="JSON, optional">
          <input value={properties} onInput={(e) => setProperties(valueOf(e))} />
        </Field>
        <button type="submit" disabled={busy}>
          Test
        </button>
      </form>
      <ErrorNote error={error} />
      {answer ? (
        <div role="status" class="answer" aria-label="Test result">
          <p>
            /decide answers <strong class="mono">{value}</strong>
          </p>
          <p>
            Why: {answer.reason?.description ?? answer.reason?.code ?? 'no reason given'}
            {answer.reason?.code ? ` (${answer.reason.code})` : ''}
          </p>
          {answer.metadata?.payload !== undefined && answer.metadata?.payload !== null ? (
            <p>
              Payload: <span class="mono">{JSON.stringify(answer.metadata.payload)}</span>
            </p>
          ) : null}
        </div>
      ) : null}
    </section>
  )
}
