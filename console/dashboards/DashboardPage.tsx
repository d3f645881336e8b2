// A dashboard: its tiles, each titled by its insight's name and drawn with the Insights page's charts; "Rename",
// "Add insight" (a saved insight joins by PATCHing its `dashboards`), "Remove <name>" per tile, "Refresh", "Delete".
import { useEffect, useState } from 'preact/hooks'
import { api, projectPath, query } from '../lib/api'
import { ConfirmedButton, ErrorNote, Field, Loading, Page, time, useAsync, valueOf } from '../lib/ui'
import { useAction } from '../lib/forms'
import { navigate } from '../lib/router'
import { useSession } from '../lib/session'
import { InsightView } from '../insights/InsightView'
import { sourceOf } from '../insights/query'
import { insightName, type Dashboard, type InsightSummary, type Tile } from './types'

function TileView(props: { tile: Tile; onRemove: () => void }) {
  const { tile } = props
  const name = insightName(tile.insight)
  const headingId = `tile-${tile.id}`
  return (
    <article class="tile" aria-labelledby={headingId}>
      <div class="page-head">
        <h2 id={headingId}>{name}</h2>
        <ConfirmedButton label="Remove" name={`Remove ${name}`} title={`Remove “${name}” from this dashboard?`} onConfirm={props.onRemove}>
          <p>The insight stays saved; only its tile leaves this dashboard.</p>
        </ConfirmedButton>
      </div>
      {tile.error?.detail ? (
        <p class="error" role="alert">
          {tile.error.detail}
        </p>
      ) : null}
      <InsightView kind={sourceOf(tile.insight?.query)?.kind} result={tile.insight?.result} name={name} />
      <p class="muted small">Computed {time(tile.insight?.last_refresh)}</p>
    </article>
  )
}

function AddInsight(props: { dashboardId: number; onAdded: () => void; shown: Set<number> }) {
  const { projectId } = useSession()
  const saved = useAsync(
    (signal) => api<{ results: InsightSummary[] }>(projectPath(projectId, `insights/${query({ saved: 'true', basic: 'true', limit: 200 })}`), { signal }),
    [projectId, props.shown.size],
  )
  const [chosen, setChosen] = useState('')
  const action = useAction()
  const choices = (saved.data?.results ?? []).filter((i) => !props.shown.has(i.id))
  const add = (event: Event) => {
    event.preventDefault()
    const insight = choices.find((i) => String(i.id) === chosen)
    if (!insight) return
    action.run(async () => {
      await api(projectPath(projectId, `insights/${insight.id}/`), { method: 'PATCH', json: { dashboards: [...(insight.dashboards ?? []), props.dashboardId] } })
      setChosen('')
      props.onAdded()
    })
  }
  return (
    <form class="row" onSubmit={add}>
      <Field label="Add insight" hint={choices.length ? undefined : saved.data?.results.length ? 'Every saved insight is on this dashboard.' : 'Save an insight on the Insights page first.'}>
        <select value={chosen} onChange={(e) => setChosen(valueOf(e))}>
          <option value="">Choose a saved insight…</option>
          {choices.map((i) => (
            <option key={i.id} value={String(i.id)}>
              {insightName(i)}
            </option>
          ))}
        </select>
      </Field>
      <button type="submit" disabled={!chosen || action.busy}>
        Add
      </button>
      <ErrorNote error={action.error ?? saved.error} />
    </form>
  )
}

function Rename(props: { dashboard: Dashboard; onRenamed: () => void }) {
  const { projectId } = useSession()
  const [name, setName] = useState(props.dashboard.name)
  const action = useAction()
  useEffect(() => setName(props.dashboard.name), [props.dashboard.name])
  const submit = (event: Event) => {
    event.preventDefault()
    action.run(async () => {
      await api(projectPath(projectId, `dashboards/${props.dashboard.id}/`), { method: 'PATCH', json: { name: name.trim() } })
      props.onRenamed()
      return true
    })
  }
  return (
    <form class="row" onSubmit={submit}>
      <Field label="Name">
        <input
          required
          maxLength={400}
          value={name}
          onInput={(e) => {
            setName(valueOf(e))
            action.reset()
          }}
        />
      </Field>
      <button type="submit" disabled={action.busy || !name.trim() || name.trim() === props.dashboard.name}>
        Rename
      </button>
      <ErrorNote error={action.error} />
    </form>
  )
}

export function DashboardPage(props: { id: string }) {
  const { projectId } = useSession()
  // the first read computes the tiles never computed or stale; "Refresh" recomputes them all
  const [refresh, setRefresh] = useState<{ mode: 'blocking' | 'true'; tick: number }>({ mode: 'blocking', tick: 0 })
  const dashboard = useAsync(
    (signal) => api<Dashboard>(projectPath(projectId, `dashboards/${encodeURIComponent(props.id)}/${query({ refresh: refresh.mode })}`), { signal }),
    [projectId, props.id, refresh],
  )
  const action = useAction()
  const reload = () => setRefresh((r) => ({ mode: 'blocking', tick: r.tick + 1 }))
  const d = dashboard.data
  const tiles = (d?.tiles ?? []).filter((t) => !t.deleted && t.insight)
  const removeTile = (tile: Tile) =>
    action.run(async () => {
      await api(projectPath(projectId, `dashboards/${props.id}/`), { method: 'PATCH', json: { tiles: [{ id: tile.id, deleted: true }] } })
      reload()
    })
  const remove = () =>
    action.run(async () => {
      await api(projectPath(projectId, `dashboards/${props.id}/`), { method: 'PATCH', json: { deleted: true } })
      navigate('/dashboards')
    })
  if (!d) return <Page title="Dashboard">{dashboard.error ? <ErrorNote error={dashboard.error} /> : <Loading what="the dashboard" />}</Page>
  return (
    <Page
      title={d.name || `Dashboard ${d.id}`}
      actions={
        <div class="row">
          <button type="button" disabled={dashboard.loading} onClick={() => setRefresh((r) => ({ mode: 'true', tick: r.tick + 1 }))}>
            {dashboard.loading ? 'Refreshing…' : 'Refresh'}
          </button>
          <ConfirmedButton label="Delete" name={`Delete dashboard ${d.name}`} title={`Delete the dashboard “${d.name}”?`} onConfirm={remove}>
            <p>Its insights stay saved.</p>
          </ConfirmedButton>
        </div>
      }
    >
      <Rename dashboard={d} onRenamed={reload} />
      <AddInsight dashboardId={d.id} shown={new Set(tiles.map((t) => t.insight!.id))} onAdded={reload} />
      <ErrorNote error={action.error ?? dashboard.error} />
      <p class="muted small" aria-live="polite">
        {dashboard.loading ? 'Refreshing…' : `Last refreshed ${time(d.last_refresh)}`}
      </p>
      {tiles.length === 0 ? <p class="muted">No insight on this dashboard yet: add a saved insight above.</p> : null}
      <div class="tiles">
        {tiles.map((tile) => (
          <TileView key={tile.id} tile={tile} onRemove={() => removeTile(tile)} />
        ))}
      </div>
    </Page>
  )
}
