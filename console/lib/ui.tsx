// Shared pieces of every page. Everything user-supplied goes through JSX text, never through HTML.
import { cloneElement, type ComponentChildren, type TargetedEvent, type VNode } from 'preact'
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks'
import { messageOf } from './api'
import { BASE, navigate } from './router'
import { axisTicks, labelledIndexes, tickText } from './axis'

export function Link(props: { to: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' | undefined }) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(props.to)
  }
  return (
    <a href={`${BASE}${props.to}`} onClick={onClick} class={props.class} aria-current={props['aria-current']}>
      {props.children}
    </a>
  )
}

export function Loading(props: { what?: string }) {
  return (
    <p class="muted" role="status">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  )
}

export function ErrorNote(props: { error: unknown }) {
  if (!props.error) return null
  return (
    <p class="error" role="alert">
      {messageOf(props.error)}
    </p>
  )
}

export interface Async<T> {
  data: T | undefined
  error: unknown
  loading: boolean
  reload: () => void
}

/** Runs `load` now and whenever `deps` change (or reload() is called); the newest answer wins. */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true })
  const [tick, setTick] = useState(0)
  useEffect(() => {
    const controller = new AbortController()
    setState((s) => ({ ...s, loading: true }))
    load(controller.signal).then(
      (data) => !controller.signal.aborted && setState({ data, loading: false }),
      (error) => !controller.signal.aborted && setState((s) => ({ data: s.data, error, loading: false })),
    )
    return () => controller.abort()
  }, [...deps, tick])
  return { data: state.data, error: state.error, loading: state.loading, reload: useCallback(() => setTick((t) => t + 1), []) }
}

/** Calls `tick` every `ms` while the page is open (and once at once). */
export function useInterval(tick: () => void, ms: number): void {
  const saved = useRef(tick)
  saved.current = tick
  useEffect(() => {
    const id = setInterval(() => saved.current(), ms)
    return () => clearInterval(id)
  }, [ms])
}

/** A labelled control: the label names it, the hint describes it (and stays out of its name). */
/** The options of a select, from [value, label] pairs. */
export function Options(props: { choices: readonly (readonly [string, string])[] }) {
  return (
    <>
      {props.choices.map(([value, label]) => (
        <option key={value} value={value}>
          {label}
        </option>
      ))}
    </>
  )
}

export function Field(props: { label: string; children: VNode<any>; hint?: string }) {
  const id = useId()
  const hintId = `${id}-hint`
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {cloneElement(props.children, { id, 'aria-describedby': props.hint ? hintId : undefined })}
      {props.hint ? (
        <small class="muted" id={hintId}>
          {props.hint}
        </small>
      ) : null}
    </div>
  )
}

/** The project's timezone, once the shell has read it: insights count days in it, so every time is written in it. */
let displayZone: string | null = null
export function setDisplayZone(zone: string | null): void {
  displayZone = zone
}

export function time(value: string | null | undefined): string {
  if (!value) return '—'
  const d = new Date(value)
  if (Number.isNaN(d.getTime())) return value
  try {
    return d.toLocaleString([], displayZone ? { timeZone: displayZone } : {})
  } catch {
    // a zone this browser does not know: its own time rather than nothing
    return d.toLocaleString()
  }
}

/** A property value as text: strings as they are, anything else as JSON. */
export function valueText(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === undefined) return ''
  return JSON.stringify(value)
}

export function PropertiesTable(props: { properties: Record<string, unknown> | null | undefined; caption: string }) {
  const entries = Object.entries(props.properties ?? {})
  if (entries.length === 0) return <p class="muted">No properties.</p>
  return (
    <div class="scroll">
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Property</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([k, v]) => (
            <tr key={k}>
              <td class="mono">{k}</td>
              <td class="mono wrap">{valueText(v)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** A confirmation in a modal <dialog> (role dialog, named by its title): Escape or Cancel closes it. */
export function Confirm(props: { open: boolean; title: string; children: ComponentChildren; confirmLabel: string; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  useEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    if (props.open && !dialog.open) dialog.showModal()
    if (!props.open && dialog.open) dialog.close()
  }, [props.open])
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={props.onCancel}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
      <div class="row">
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  )
}

/**
 * A destructive button that asks first: it opens a dialog titled `title` whose confirming button repeats the
 * action's name (`label`); `name` is the button's accessible name when the label alone is ambiguous ("Revoke ci").
 */
export function ConfirmedButton(props: { label: string; name?: string; title: string; disabled?: boolean; children: ComponentChildren; onConfirm: () => void }) {
  const [open, setOpen] = useState(false)
  return (
    <>
      <button type="button" class="danger" disabled={props.disabled} aria-label={props.name} onClick={() => setOpen(true)}>
        {props.label}
      </button>
      <Confirm
        open={open}
        title={props.title}
        confirmLabel={props.label}
        onCancel={() => setOpen(false)}
        onConfirm={() => {
          setOpen(false)
          props.onConfirm()
        }}
      >
        {props.children}
      </Confirm>
    </>
  )
}

export interface BarPoint {
  /** the point's time or name, as the axis and the table show it */
  label: string
  value: number
}

/**
 * A bar chart drawn in SVG: role img, named, with a value axis (round steps), labels along the bottom, every bar's
 * figure in its title, and the same figures in a table for readers (a disclosure under it).
 */
export function BarChart(props: { name: string; points: BarPoint[]; unit?: string }) {
  const left = 44
  const width = 640
  const plot = width - left
  const height = 140
  // room above the highest tick for its label
  const topPad = 10
  const max = Math.max(0, ...props.points.map((p) => p.value))
  const ticks = axisTicks(max)
  const top = ticks[ticks.length - 1]
  const barWidth = props.points.length ? plot / props.points.length : plot
  const y = (v: number) => height - (v / top) * (height - topPad)
  const unit = props.unit ? ` ${props.unit}` : ''
  return (
    <figure class="chart">
      <svg role="img" aria-label={props.name} viewBox={`0 0 ${width} ${height + 24}`} preserveAspectRatio="none">
        <title>{props.name}</title>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={left} y1={y(t)} x2={width} y2={y(t)} class={t === 0 ? 'axis' : 'grid'} />
            <text x={left - 4} y={y(t) + 4} text-anchor="end" class="tick">
              {tickText(t)}
            </text>
          </g>
        ))}
        {props.points.map((p, i) => {
          const h = (p.value / top) * (height - topPad)
          return (
            <rect key={i} x={left + i * barWidth + 1} y={height - h} width={Math.max(1, barWidth - 2)} height={h} class="bar">
              <title>{`${p.label}: ${p.value}${unit}`}</title>
            </rect>
          )
        })}
        {labelledIndexes(props.points.length, 4).map((i) => (
          <text key={i} x={i === props.points.length - 1 ? width : left + (i + 0.5) * barWidth} y={height + 16} text-anchor={i === props.points.length - 1 ? 'end' : 'middle'} class="tick">
            {props.points[i].label}
          </text>
        ))}
      </svg>
      <figcaption class="muted">
        {props.name}: peak {max}
        {unit}, total {props.points.reduce((sum, p) => sum + p.value, 0)}
        {unit}
      </figcaption>
      <details>
        <summary>Table view</summary>
        <table>
          <caption class="sr-only">{props.name}</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">{props.unit ?? 'Value'}</th>
            </tr>
          </thead>
          <tbody>
            {props.points.map((p, i) => (
              <tr key={i}>
                <td>{p.label}</td>
                <td>{p.value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  )
}

export function Page(props: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · phog`
  }, [props.title])
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title">{props.title}</h1>
        {props.actions}
      </header>
      {props.children}
    </section>
  )
}

export type InputEvent = TargetedEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, Event>
export const valueOf = (event: InputEvent) => event.currentTarget.value
