// Stores up or down, ingest rate, backlog, consumer lag, dead letters and flush latency, read from /_ready and
// /metrics every 3 s; the last hour of ingest rate is kept in memory (for as long as the console is open).
import { useEffect, useState } from 'preact/hooks'
import { BarChart, ErrorNote, Loading, Page, useInterval, type BarPoint } from '../lib/ui'
import { snapshotOf, type Snapshot } from './metrics'

const EVERY_MS = 3000
const HOUR_MS = 3600_000

interface RatePoint {
  at: number
  perSecond: number
}

/** Module state: survives moving between pages, bounded to an hour of samples. */
const history: RatePoint[] = []
let previous: Snapshot | null = null

interface View {
  snapshot: Snapshot
  rate: number | null
  flushMs: number | null
  ready: { status: string; checks: Record<string, string> } | null
}

async function sample(): Promise<View> {
  const [metrics, ready] = await Promise.all([
    fetch('/metrics', { credentials: 'same-origin' }).then((r) => {
      if (!r.ok) throw new Error(`/metrics answered ${r.status}`)
      return r.text()
    }),
    fetch('/_ready', { credentials: 'same-origin' }).then((r) => r.json().catch(() => null)),
  ])
  const snapshot = snapshotOf(metrics, Date.now())
  let rate: number | null = null
  let flushMs: number | null = null
  if (previous && snapshot.at > previous.at) {
    rate = Math.max(0, (snapshot.received - previous.received) / ((snapshot.at - previous.at) / 1000))
    const flushes = snapshot.flushes - previous.flushes
    flushMs = flushes > 0 ? ((snapshot.flushSeconds - previous.flushSeconds) / flushes) * 1000 : null
    history.push({ at: snapshot.at, perSecond: rate })
    while (history.length && history[0].at < snapshot.at - HOUR_MS) history.shift()
  }
  previous = snapshot
  return { snapshot, rate, flushMs, ready }
}

/** The hour in 60 one-minute bars: each the average rate of its samples. */
function minuteBars(now: number): BarPoint[] {
  const points: BarPoint[] = []
  for (let i = 59; i >= 0; i--) {
    const from = now - (i + 1) * 60_000
    const to = now - i * 60_000
    const inside = history.filter((p) => p.at > from && p.at <= to)
    const value = inside.length ? inside.reduce((s, p) => s + p.perSecond, 0) / inside.length : 0
    points.push({ label: new Date(to).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }), value: Math.round(value * 10) / 10 })
  }
  return points
}

export function Health() {
  const [view, setView] = useState<View | null>(null)
  const [error, setError] = useState<unknown>(null)
  const refresh = () =>
    sample().then(
      (v) => {
        setView(v)
        setError(null)
      },
      (e) => setError(e),
    )
  useEffect(() => {
    void refresh()
  }, [])
  useInterval(refresh, EVERY_MS)
  const s = view?.snapshot
  return (
    <Page title="Health">
      <ErrorNote error={error} />
      {!view && !error ? <Loading what="health" /> : null}
      {view && s ? (
        <>
          <section aria-labelledby="stores-title">
            <h2 id="stores-title">Stores</h2>
            <ul class="stores">
              {s.stores.map((store) => (
                <li key={store.name} class={store.up ? 'up' : 'down'}>
                  {store.name} {store.up ? 'up' : 'down'}
                </li>
              ))}
            </ul>
            {view.ready ? (
              <p class={view.ready.status === 'ready' ? 'ok' : 'error'}>
                Readiness: {view.ready.status === 'ready' ? 'ready' : 'not ready'}
                {Object.entries(view.ready.checks ?? {})
                  .filter(([, v]) => v !== 'ok')
                  .map(([k, v]) => ` · ${k}: ${v}`)
                  .join('')}
              </p>
            ) : null}
          </section>
          <dl class="figures">
            <div>
              <dt>Ingest rate</dt>
              <dd>{view.rate === null ? 'measuring…' : `${view.rate.toFixed(1)} events/s`}</dd>
            </div>
            <div>
              <dt>Backlog</dt>
              <dd>{s.backlog} records</dd>
            </div>
            <div>
              <dt>Unflushed log</dt>
              <dd>{(s.walBytes / 1024 / 1024).toFixed(1)} MB</dd>
            </div>
            <div>
              <dt>Dead letters</dt>
              <dd>{s.deadLetters} events</dd>
            </div>
            <div>
              <dt>Flush latency</dt>
              <dd>{view.flushMs === null ? 'no flush in the last interval' : `${view.flushMs.toFixed(0)} ms`}</dd>
            </div>
            {s.lag.map((l) => (
              <div key={l.consumer}>
                <dt>Consumer lag ({l.consumer})</dt>
                <dd>{l.records} records</dd>
              </div>
            ))}
          </dl>
          <h2>Ingest rate, last hour</h2>
          <BarChart name="Ingest rate over the last hour" points={minuteBars(Date.now())} unit="events/s" />
          <p class="muted small">Kept in this browser while the console is open; refreshed every {EVERY_MS / 1000} s.</p>
        </>
      ) : null}
    </Page>
  )
}
