// The Insights page: tabs "Trends", "Funnel", "Retention"; the form of the chosen kind; its answer from the query
// API drawn as a chart (with its table view); "Save insight" keeps the query as a saved insight.
import { useEffect, useState } from 'preact/hooks'
import { api, ApiFailure, projectPath } from '../lib/api'
import { ErrorNote, Field, Loading, Page, useAsync, valueOf } from '../lib/ui'
import { useAction } from '../lib/forms'
import { useSession } from '../lib/session'
import { EventNames, FunnelBuilder, RetentionBuilder, TrendBuilder } from './Builders'
import { InsightView } from './InsightView'
import { funnelProblem, funnelsQuery, newFunnelForm, newTrendForm, retentionQuery, trendProblem, trendsQuery } from './query'

type Tab = 'Trends' | 'Funnel' | 'Retention'
const TABS: Tab[] = ['Trends', 'Funnel', 'Retention']
const CHART_NAMES: Record<Tab, string> = { Trends: 'Trend', Funnel: 'Funnel', Retention: 'Retention' }

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

function SaveInsight(props: { node: Record<string, unknown>; disabled: boolean }) {
  const { projectId } = useSession()
  const [name, setName] = useState('')
  const [saved, setSaved] = useState<string | null>(null)
  const action = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    action.run(async () => {
      const insight = await api<{ id: number; name: string }>(projectPath(projectId, 'insights/'), {
        json: { name: name.trim(), saved: true, query: { kind: 'InsightVizNode', source: props.node } },
      })
      setSaved(insight.name)
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

export function Insights() {
  const { projectId } = useSession()
  const [tab, setTab] = useState<Tab>('Trends')
  const [trend, setTrend] = useState(newTrendForm)
  const [funnel, setFunnel] = useState(newFunnelForm)
  const [retention, setRetention] = useState({ targetEvent: '$pageview', returningEvent: '$pageview', dateFrom: '-7d' })

  const problem = tab === 'Trends' ? trendProblem(trend) : tab === 'Funnel' ? funnelProblem(funnel) : null
  const node = tab === 'Trends' ? trendsQuery(trend) : tab === 'Funnel' ? funnelsQuery(funnel) : retentionQuery(retention)
  const text = useSettled(JSON.stringify(node), 350)
  const answer = useAsync(
    (signal) => (problem ? Promise.resolve(null) : api<{ results: unknown }>(projectPath(projectId, 'query/'), { json: { query: JSON.parse(text) }, signal })),
    [projectId, text, problem],
  )
  const settledKind = (JSON.parse(text) as { kind: string }).kind
  const current = settledKind === node.kind && !answer.loading
  const unserved = answer.error instanceof ApiFailure && answer.error.attr === 'query__kind'
  return (
    <Page title="Insights">
      <EventNames />
      <Tabs current={tab} onChoose={setTab} />
      <div role="tabpanel" id="insight-panel" aria-labelledby={`insight-tab-${tab}`}>
        {tab === 'Trends' ? <TrendBuilder form={trend} onChange={setTrend} /> : null}
        {tab === 'Funnel' ? <FunnelBuilder form={funnel} onChange={setFunnel} /> : null}
        {tab === 'Retention' ? <RetentionBuilder form={retention} onChange={setRetention} /> : null}
        {problem ? (
          <p class="muted" role="status">
            {problem}
          </p>
        ) : null}
        {unserved ? (
          <p class="muted" role="status">
            This server does not answer {tab === 'Retention' ? 'retention' : 'this kind of'} queries yet.
          </p>
        ) : (
          <ErrorNote error={answer.error} />
        )}
        {answer.loading ? <Loading what="the answer" /> : null}
        {answer.data && settledKind === node.kind && !answer.error ? (
          <div aria-busy={!current}>
            <InsightView kind={settledKind} result={answer.data.results} name={CHART_NAMES[tab]} />
          </div>
        ) : null}
        <SaveInsight node={node} disabled={Boolean(problem) || unserved} />
      </div>
    </Page>
  )
}
