import { useState } from 'preact/hooks'
import { api } from '../lib/api'
import { ConfirmedButton, ErrorNote, Field, time, useAsync, valueOf } from '../lib/ui'
import { useAction } from '../lib/forms'
import { ListBody, Table } from '../lib/lists'
import { CopyButton } from './CopyButton'

interface PersonalKey {
  id: string
  label: string
  value: string | null
  mask_value: string
  created_at: string | null
  last_used_at: string | null
}

export function PersonalKeys() {
  const keys = useAsync((signal) => api<PersonalKey[]>('/api/personal_api_keys/', { signal }), [])
  const [label, setLabel] = useState('')
  const [shown, setShown] = useState<{ label: string; value: string } | null>(null)
  const action = useAction()
  // every change ends by reading the list again
  const run = (work: () => Promise<void>) =>
    action.run(async () => {
      await work()
      keys.reload()
    })
  const create = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      const created = await api<PersonalKey>('/api/personal_api_keys/', { json: { label: label.trim(), scopes: ['*'] } })
      setShown({ label: created.label, value: created.value ?? '' })
      setLabel('')
    })
  }
  const roll = (key: PersonalKey) =>
    run(async () => {
      const rolled = await api<PersonalKey>(`/api/personal_api_keys/${key.id}/roll/`, { method: 'POST' })
      setShown({ label: rolled.label, value: rolled.value ?? '' })
    })
  const revoke = (key: PersonalKey) =>
    run(async () => {
      await api(`/api/personal_api_keys/${key.id}/`, { method: 'DELETE' })
      if (shown?.label === key.label) setShown(null)
    })
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">Personal API keys</h2>
      <p class="muted small">For scripts and server SDKs calling the private API as you. A key is shown once, when it is made or rolled.</p>
      <form class="row" onSubmit={create} aria-label="Create a personal API key">
        <Field label="Label">
          <input required maxLength={40} value={label} onInput={(e) => setLabel(valueOf(e))} />
        </Field>
        <button type="submit" class="primary" disabled={action.busy}>
          Create key
        </button>
      </form>
      <ErrorNote error={action.error ?? keys.error} />
      {shown ? (
        <div class="shown" role="status">
          <p>
            The key <strong>{shown.label}</strong> (copy it now, it is not shown again):
          </p>
          <div class="row">
            <code class="token" aria-label="New personal API key">
              {shown.value}
            </code>
            <CopyButton text={shown.value} label="Copy key" />
            <button type="button" onClick={() => setShown(null)}>
              Done
            </button>
          </div>
        </div>
      ) : null}
      <ListBody state={keys} count={keys.data?.length ?? 0} what="keys" empty="No personal API keys.">
        <Table caption="Personal API keys" columns={['Label', 'Key', 'Last used', 'Actions']}>
          {(keys.data ?? []).map((k) => (
            <tr key={k.id}>
              <td>{k.label}</td>
              <td class="mono">{k.mask_value}</td>
              <td>{time(k.last_used_at)}</td>
              <td class="row">
                <ConfirmedButton label="Roll" name={`Roll ${k.label}`} title={`Roll the key ${k.label}?`} disabled={action.busy} onConfirm={() => roll(k)}>
                  <p>A new key replaces it: scripts using the current one are refused from now on.</p>
                </ConfirmedButton>
                <ConfirmedButton label="Revoke" name={`Revoke ${k.label}`} title={`Revoke the key ${k.label}?`} disabled={action.busy} onConfirm={() => revoke(k)}>
                  <p>Scripts using it are refused from now on. This cannot be undone.</p>
                </ConfirmedButton>
              </td>
            </tr>
          ))}
        </Table>
      </ListBody>
    </section>
  )
}
