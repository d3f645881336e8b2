import { useState } from 'preact/hooks'
import { api, projectPath, query } from '../lib/api'
import { ErrorNote, Field, Link, Page, valueOf } from '../lib/ui'
import { ListBody, LoadMore, Table, usePages } from '../lib/lists'
import { useSession } from '../lib/session'
import { rolloutSummary, type Flag } from './types'

export function FlagList() {
  const { projectId } = useSession()
  const [search, setSearch] = useState('')
  const path = projectPath(projectId, `feature_flags/${query({ search: search.trim(), limit: 100 })}`)
  const flags = usePages<Flag>(path, (f) => f.id, [path])
  const [saving, setSaving] = useState<Record<number, boolean>>({})
  const [error, setError] = useState<unknown>(null)
  const [overrides, setOverrides] = useState<Record<number, boolean>>({})

  const toggle = async (flag: Flag, active: boolean) => {
    setSaving((s) => ({ ...s, [flag.id]: true }))
    setError(null)
    setOverrides((o) => ({ ...o, [flag.id]: active }))
    try {
      const saved = await api<Flag>(projectPath(projectId, `feature_flags/${flag.id}/`), { method: 'PATCH', json: { active } })
      setOverrides((o) => ({ ...o, [flag.id]: saved.active }))
    } catch (failure) {
      setOverrides((o) => ({ ...o, [flag.id]: flag.active }))
      setError(failure)
    } finally {
      setSaving((s) => ({ ...s, [flag.id]: false }))
    }
  }
  const needle = search.trim()
  const rows = flags.items
  return (
    <Page
      title="Feature flags"
      actions={
        <Link to="/flags/new" class="button primary">
          New feature flag
        </Link>
      }
    >
      <Field label="Search">
        <input type="search" value={search} onInput={(e) => setSearch(valueOf(e))} />
      </Field>
      <ErrorNote error={flags.error ?? error} />
      <ListBody state={flags} count={rows.length} what="flags" empty={`No feature flags${needle ? ' match' : ' yet'}.`}>
        <Table caption="Feature flags" columns={['Key', 'Name', 'Release', 'Enabled']}>
          {rows.map((flag) => {
            const active = overrides[flag.id] ?? flag.active
            return (
              <tr key={flag.id}>
                <td class="mono">
                  <Link to={`/flags/${flag.id}`}>{flag.key}</Link>
                </td>
                <td>{flag.name}</td>
                <td>{rolloutSummary(flag)}</td>
                <td>
                  <input
                    type="checkbox"
                    role="switch"
                    class="switch"
                    aria-label={`Enabled ${flag.key}`}
                    checked={active}
                    aria-checked={active}
                    disabled={saving[flag.id]}
                    onChange={(e) => toggle(flag, e.currentTarget.checked)}
                  />
                </td>
              </tr>
            )
          })}
        </Table>
      </ListBody>
      <LoadMore pages={flags} what="flags" />
    </Page>
  )
}
