// The Insights page: tabs "Trends", "Funnel", "Retention"; the form of the chosen kind; its answer from the query
// API drawn as a chart (with its table view); "Save insight" keeps the query as a saved insight.
import { useEffect, useState } from 'preact/hooks'
import { api, ApiFailure, projectPath, query } from '../lib/api'
import { ConfirmedButton, ErrorNote, Field, Link, Loading, Page, time, useAsync, valueOf } from '../lib/ui'
import { navigate } from '../lib/router'
import { ListBody, LoadMore, Table, usePages } from '../lib/lists'
import { useAction } from '../lib/forms'
import { useSession } from '../lib/session'
import { EventNames, FunnelBuilder, LifecycleBuilder, RetentionBuilder, TrendBuilder } from './Builders'
import { InsightView } from './InsightView'
import { funnelFormOf, funnelProblem, funnelsQuery, lifecycleFormOf, lifecycleQuery, newFunnelForm, newLifecycleForm, newRetentionForm, newTrendForm, retentionFormOf, retentionQuery, sourceOf, stickinessQuery, trendFormOf, trendProblem, trendsQuery } from './query'

type Tab = 'Trends' | 'Funnel' | 'Retention' | 'Lifecycle' | 'Stickiness'
const TABS: Tab[] = ['Trends', 'Funnel', 'Retention', 'Lifecycle', 'Stickiness']
const CHART_NAMES: Record<Tab, string> = { Trends: 'Trend', Funnel: 'Funnel', Retention: 'Retention', Lifecycle: 'Lifecycle', Stickiness: 'Stickiness' }
/** the saved queries the builder can show again */
const EDITABLE = new Set(['TrendsQuery', 'FunnelsQuery', 'RetentionQuery', 'LifecycleQuery', 'StickinessQuery'])

/** `value`, once it has stayed the same for `ms` (typing an event name sends one query, not one a letter). */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const id = setTimeout(() => setSettled(value), ms)
    return () => clearTimeout(id)
  }, [value, ms])
  return settled
}

function Tabs(props: { current: Tab; onChoose: (tab: Tab) => void }) {
  const move = (event: KeyboardEvent) => {
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0
    if (!step) return
    const next = TABS[(TABS.indexOf(props.current) + step + TABS.length) % TABS.length]
    props.onChoose(next)
    ;(document.getElementById(`insight-tab-${next}`) as HTMLElement | null)?.focus()
  }
  return (
    <div role="tablist" aria-label="Insight kind" class="tabs" onKeyDown={move}>
      {TABS.map((tab) => (
        <button
          key={tab}
          type="button"
          role="tab"
          id={`insight-tab-${tab}`}
          aria-selected={tab === props.current}
          aria-controls="insight-panel"
          tabIndex={tab === props.current ? 0 : -1}
          onClick={() => props.onChoose(tab)}
        >
          {tab}
        </button>
      ))}
    </div>
  )
}

/** "Save insight": a new saved insight, or (opened from the list) the same one with its new query and name. */
function SaveInsight(props: { node: Record<string, unknown>; disabled: boolean; id: number | null; name: string; onSaved: () => void }) {
  const { projectId } = useSession()
  const [name, setName] = useState(props.name)
  const [saved, setSaved] = useState<string | null>(null)
  const action = useAction()
  useEffect(() => setName(props.name), [props.name])
  const submit = (event: Event) => {
    event.preventDefault()
    action.run(async () => {
      const json = { name: name.trim(), saved: true, query: { kind: 'InsightVizNode', source: props.node } }
      const insight =
        props.id === null
          ? await api<{ id: number; name: string }>(projectPath(projectId, 'insights/'), { json })
          : await api<{ id: number; name: string }>(projectPath(projectId, `insights/${props.id}/`), { method: 'PATCH', json })
      setSaved(insight.name)
      props.onSaved()
    })
  }
  return (
    <form class="row save-insight" onSubmit={submit}>
      <Field label="Name">
        <input
          required
          maxLength={400}
          value={name}
          onInput={(e) => {
            setName(valueOf(e))
            setSaved(null)
            action.reset()
          }}
        />
      </Field>
      <button type="submit" class="primary" disabled={action.busy || props.disabled || !name.trim()}>
        Save insight
      </button>
      <ErrorNote error={action.error} />
      {saved !== null ? (
        <p role="status" class="ok">
          {`Saved as “${saved}”: add it to a dashboard from the Dashboards page.`}
        </p>
      ) : null}
    </form>
  )
}

/** The project's saved insights, each opening in the builder. */
function SavedInsights(props: { version: number; openedId: number | null }) {
  const { projectId } = useSession()
  const path = projectPath(projectId, `insights/${query({ saved: 'true', basic: 'true', limit: 100 })}`)
  const insights = usePages<{ id: number; name: string | null; derived_name?: string | null; last_modified_at?: string }>(path, (i) => i.id, [path, props.version])
  const action = useAction()
  // PostHog's API has no DELETE for insights: a deleted insight is PATCHed `deleted: true` (and leaves its dashboards)
  const remove = (id: number) =>
    action.run(async () => {
      await api(projectPath(projectId, `insights/${id}/`), { method: 'PATCH', json: { deleted: true } })
      insights.reload()
      if (props.openedId === id) navigate('/insights')
    })
  return (
    <section aria-labelledby="saved-insights">
      <h2 id="saved-insights">Saved insights</h2>
      <ErrorNote error={insights.error} />
      <ErrorNote error={action.error} />
      <ListBody state={insights} count={insights.items.length} what="saved insights" empty="No saved insight yet.">
        <Table caption="Saved insights" columns={['Name', 'Changed', 'Actions']}>
          {insights.items.map((i) => {
            const name = i.name || i.derived_name || `Insight ${i.id}`
            return (
              <tr key={i.id}>
                <td>
                  <Link to={`/insights/${i.id}`}>{name}</Link>
                </td>
                <td>{time(i.last_modified_at)}</td>
                <td>
                  <ConfirmedButton label="Delete" name={`Delete insight ${name}`} title={`Delete the insight “${name}”?`} disabled={action.busy} onConfirm={() => remove(i.id)}>
                    <p>It leaves every dashboard it is on.</p>
                  </ConfirmedButton>
                </td>
              </tr>
            )
          })}
        </Table>
      </ListBody>
      <LoadMore pages={insights} what="saved insights" />
    </section>
  )
}

export function Insights(props: { id: string | null }) {
  const { projectId } = useSession()
  const [tab, setTab] = useState<Tab>('Trends')
  const [trend, setTrend] = useState(newTrendForm)
  const [funnel, setFunnel] = useState(newFunnelForm)
  const [retention, setRetention] = useState(newRetentionForm)
  const [lifecycle, setLifecycle] = useState(newLifecycleForm)
  const [stickiness, setStickiness] = useState(newLifecycleForm)
  const [savedVersion, setSavedVersion] = useState(0)
  // a saved insight opened from the list: its query fills the form of its kind
  const opened = useAsync(
    (signal) => (props.id === null ? Promise.resolve(null) : api<{ id: number; name: string | null; query: unknown }>(projectPath(projectId, `insights/${encodeURIComponent(props.id)}/${query({ basic: 'true' })}`), { signal })),
    [projectId, props.id],
  )
  useEffect(() => {
    const source = sourceOf(opened.data?.query)
    if (source?.kind === 'TrendsQuery') {
      setTab('Trends')
      setTrend(trendFormOf(source))
    } else if (source?.kind === 'FunnelsQuery') {
      setTab('Funnel')
      setFunnel(funnelFormOf(source))
    } else if (source?.kind === 'RetentionQuery') {
      setTab('Retention')
      setRetention(retentionFormOf(source))
    } else if (source?.kind === 'LifecycleQuery') {
      setTab('Lifecycle')
      setLifecycle(lifecycleFormOf(source))
    } else if (source?.kind === 'StickinessQuery') {
      setTab('Stickiness')
      setStickiness(lifecycleFormOf(source))
    }
  }, [opened.data])
  const openedKind = sourceOf(opened.data?.query)?.kind

  const problem = tab === 'Trends' ? trendProblem(trend) : tab === 'Funnel' ? funnelProblem(funnel) : null
  const node =
    tab === 'Trends'
      ? trendsQuery(trend)
      : tab === 'Funnel'
        ? funnelsQuery(funnel)
        : tab === 'Lifecycle'
          ? lifecycleQuery(lifecycle)
          : tab === 'Stickiness'
            ? stickinessQuery(stickiness)
            : retentionQuery(retention)
  const text = useSettled(JSON.stringify(node), 350)
  const answer = useAsync(
    (signal) => (problem ? Promise.resolve(null) : api<{ results: unknown; timezone?: string }>(projectPath(projectId, 'query/'), { json: { query: JSON.parse(text) }, signal })),
    [projectId, text, problem],
  )
  const settledKind = (JSON.parse(text) as { kind: string }).kind
  const current = settledKind === node.kind && !answer.loading
  const unserved = answer.error instanceof ApiFailure && answer.error.attr === 'query__kind'
  return (
    <Page title={opened.data ? `Insight ${opened.data.name ?? opened.data.id}` : 'Insights'}>
      <EventNames />
      <ErrorNote error={opened.error} />
      {opened.data && !EDITABLE.has(String(openedKind)) ? (
        <p class="muted" role="status">
          This insight's query ({String(openedKind ?? 'none')}) cannot be edited here; saving replaces it with the query below.
        </p>
      ) : null}
      <Tabs current={tab} onChoose={setTab} />
      <div role="tabpanel" id="insight-panel" aria-labelledby={`insight-tab-${tab}`}>
        {tab === 'Trends' ? <TrendBuilder form={trend} onChange={setTrend} /> : null}
        {tab === 'Funnel' ? <FunnelBuilder form={funnel} onChange={setFunnel} /> : null}
        {tab === 'Retention' ? <RetentionBuilder form={retention} onChange={setRetention} /> : null}
        {tab === 'Lifecycle' ? <LifecycleBuilder form={lifecycle} onChange={setLifecycle} /> : null}
        {tab === 'Stickiness' ? <LifecycleBuilder form={stickiness} onChange={setStickiness} /> : null}
        {problem ? (
          <p class="muted" role="status">
            {problem}
          </p>
        ) : null}
        {unserved ? (
          <p class="muted" role="status">
            This server does not answer {tab === 'Trends' || tab === 'Funnel' ? 'this kind of' : tab.toLowerCase()} queries yet.
          </p>
        ) : (
          <ErrorNote error={answer.error} />
        )}
        {answer.loading ? <Loading what="the answer" /> : null}
        {answer.data && settledKind === node.kind && !answer.error ? (
          <div aria-busy={!current}>
            {/* the page's ranges all end now, so the last bucket is always the one under way */}
            <InsightView kind={settledKind} result={answer.data.results} name={CHART_NAMES[tab]} partialLast />
            {/* buckets and labels are the project's days, which need not be the reader's */}
            {answer.data.timezone ? <p class="muted small">{`Dates in ${answer.data.timezone} (the project's timezone)`}</p> : null}
          </div>
        ) : null}
        <SaveInsight
          node={node}
          disabled={Boolean(problem) || unserved}
          id={opened.data?.id ?? null}
          name={opened.data?.name ?? ''}
          onSaved={() => setSavedVersion((v) => v + 1)}
        />
      </div>
      <SavedInsights version={savedVersion} openedId={opened.data?.id ?? null} />
    </Page>
  )
}
