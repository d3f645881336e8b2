// Shared pieces of every page. Everything user-supplied goes through JSX text, never through HTML.
import { cloneElement, type ComponentChildren, type TargetedEvent, type VNode } from 'preact'
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks'
import { messageOf } from './api'
import { BASE, navigate } from './router'

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

export function time(value: string | null | undefined): string {
  if (!value) return '—'
  const d = new Date(value)
  return Number.isNaN(d.getTime()) ? value : d.toLocaleString()
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
  label: string
  value: number
}

/** A small bar chart drawn in SVG: role img, named, with every bar's figure in its title (and a table for readers). */
export function BarChart(props: { name: string; points: BarPoint[]; unit?: string }) {
  const width = 600
  const height = 140
  const max = Math.max(1, ...props.points.map((p) => p.value))
  const barWidth = props.points.length ? width / props.points.length : width
  return (
    <figure class="chart">
      <svg role="img" aria-label={props.name} viewBox={`0 0 ${width} ${height + 20}`} preserveAspectRatio="none">
        <title>{props.name}</title>
        {props.points.map((p, i) => {
          const h = Math.round((p.value / max) * height)
          return (
            <rect key={i} x={i * barWidth + 1} y={height - h} width={Math.max(1, barWidth - 2)} height={h} class="bar">
              <title>{`${p.label}: ${p.value}${props.unit ? ` ${props.unit}` : ''}`}</title>
            </rect>
          )
        })}
        <line x1="0" y1={height} x2={width} y2={height} class="axis" />
        <text x="0" y={height + 16} class="tick">
          {props.points[0]?.label ?? ''}
        </text>
        <text x={width} y={height + 16} text-anchor="end" class="tick">
          {props.points[props.points.length - 1]?.label ?? ''}
        </text>
      </svg>
      <figcaption class="muted">
        {props.name}: peak {max === 1 && props.points.every((p) => p.value === 0) ? 0 : max}
        {props.unit ? ` ${props.unit}` : ''}
      </figcaption>
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
