// The insight charts, SVG of our own: each an `svg` with role img and a name, a value axis in round steps, the
// dates along the bottom, a legend, and a table view (role table) with the same numbers.
import type { ComponentChildren } from 'preact'
import { axisTicks, labelledIndexes, tickText } from '../lib/axis'
import { colourOf, durationText, linePath, linearScale, retentionGrid, type FunnelStep, type TrendLine } from './chart-data'

const WIDTH = 640
const LEFT = 44
const HEIGHT = 180
const TOP_PAD = 10

function ValueAxis(props: { ticks: number[]; y: (v: number) => number; tick?: (v: number) => string }) {
  return (
    <>
      {props.ticks.map((t) => (
        <g key={t}>
          <line x1={LEFT} y1={props.y(t)} x2={WIDTH} y2={props.y(t)} class={t === 0 ? 'axis' : 'grid'} />
          <text x={LEFT - 4} y={props.y(t) + 4} text-anchor="end" class="tick">
            {(props.tick ?? tickText)(t)}
          </text>
        </g>
      ))}
    </>
  )
}

function Legend(props: { items: { label: string; dashed?: boolean }[] }) {
  return (
    <ul class="legend" aria-label="Legend">
      {props.items.map((item, i) => (
        <li key={i}>
          <svg width="18" height="10" aria-hidden="true">
            <line x1="0" y1="5" x2="18" y2="5" stroke={colourOf(i)} stroke-width="3" stroke-dasharray={item.dashed ? '4 3' : undefined} />
          </svg>
          {item.label}
        </li>
      ))}
    </ul>
  )
}

/** A chart's numbers as a table (for screen readers, and for reading exact values), folded under the chart. */
function TableView(props: { name: string; corner: string; headers: string[]; children: ComponentChildren }) {
  return (
    <details>
      <summary>Table view</summary>
      <div class="scroll">
        <table aria-label={`${props.name} as a table`}>
          <thead>
            <tr>
              <th scope="col">{props.corner}</th>
              {props.headers.map((h, i) => (
                <th scope="col" key={i}>
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>{props.children}</tbody>
        </table>
      </div>
    </details>
  )
}

/** The value axis of a chart: its ticks up to at least `max`, and the scale from a value to its height. */
function valueAxis(max: number) {
  const ticks = axisTicks(max)
  return { ticks, y: linearScale(ticks[ticks.length - 1], HEIGHT, TOP_PAD) }
}

/** A trend: one line per series (or breakdown value, or period), the dates of the first along the bottom. */
export function TrendChart(props: { name: string; lines: TrendLine[] }) {
  const { lines } = props
  const max = Math.max(0, ...lines.flatMap((l) => l.values))
  const { ticks, y } = valueAxis(max)
  const labels = lines[0]?.labels ?? []
  const n = Math.max(0, ...lines.map((l) => l.values.length))
  const plot = WIDTH - LEFT - 8
  const x = (i: number) => LEFT + (n > 1 ? (i * plot) / (n - 1) : plot / 2)
  return (
    <figure class="chart insight-chart">
      <svg role="img" aria-label={props.name} viewBox={`0 0 ${WIDTH} ${HEIGHT + 24}`} preserveAspectRatio="none">
        <title>{props.name}</title>
        <ValueAxis ticks={ticks} y={y} />
        {lines.map((line, i) => (
          <path key={i} d={linePath(line.values, LEFT, plot, y)} fill="none" stroke={colourOf(i)} stroke-width="2" stroke-dasharray={line.previous ? '5 4' : undefined} vector-effect="non-scaling-stroke">
            <title>{line.label}</title>
          </path>
        ))}
        {lines.length === 1 && n <= 60
          ? lines[0].values.map((v, i) => (
              <circle key={i} cx={x(i)} cy={y(v)} r="2.5" fill={colourOf(0)}>
                <title>{`${labels[i] ?? ''}: ${v}`}</title>
              </circle>
            ))
          : null}
        {labelledIndexes(labels.length, 5).map((i) => (
          <text key={i} x={x(i)} y={HEIGHT + 16} text-anchor={i === labels.length - 1 ? 'end' : i === 0 ? 'start' : 'middle'} class="tick">
            {labels[i]}
          </text>
        ))}
      </svg>
      <Legend items={lines.map((l) => ({ label: l.label, dashed: l.previous }))} />
      <TableView name={props.name} corner="When" headers={lines.map((l) => l.label)}>
        {Array.from({ length: n }, (_, row) => (
          <tr key={row}>
            <th scope="row">{labels[row] ?? ''}</th>
            {lines.map((l, i) => (
              <td key={i}>{l.values[row] ?? ''}</td>
            ))}
          </tr>
        ))}
        <tr>
          <th scope="row">Total</th>
          {lines.map((l, i) => (
            <td key={i}>{l.values.reduce((a, b) => a + b, 0)}</td>
          ))}
        </tr>
      </TableView>
    </figure>
  )
}

/** A funnel: a bar per step (persons), the conversion from the first step written on it. */
export function FunnelChart(props: { name: string; steps: FunnelStep[] }) {
  const { steps } = props
  const max = Math.max(0, ...steps.map((s) => s.count))
  const { ticks, y } = valueAxis(max)
  const plot = WIDTH - LEFT
  const band = steps.length ? plot / steps.length : plot
  return (
    <figure class="chart insight-chart">
      <svg role="img" aria-label={props.name} viewBox={`0 0 ${WIDTH} ${HEIGHT + 24}`} preserveAspectRatio="none">
        <title>{props.name}</title>
        <ValueAxis ticks={ticks} y={y} />
        {steps.map((s, i) => (
          <g key={i}>
            <rect x={LEFT + i * band + band * 0.15} y={y(s.count)} width={band * 0.7} height={HEIGHT - y(s.count)} class="bar">
              <title>{`${i + 1}. ${s.name}: ${s.count} persons, ${s.percentOfFirst}%`}</title>
            </rect>
            <text x={LEFT + (i + 0.5) * band} y={Math.max(TOP_PAD + 10, y(s.count) - 4)} text-anchor="middle" class="tick">
              {`${s.percentOfFirst}%`}
            </text>
            <text x={LEFT + (i + 0.5) * band} y={HEIGHT + 16} text-anchor="middle" class="tick">
              {`${i + 1}. ${s.name}`}
            </text>
          </g>
        ))}
      </svg>
      <figcaption class="muted">
        {steps.length > 1 ? `${steps[steps.length - 1].percentOfFirst}% of ${steps[0].count} persons converted` : ''}
      </figcaption>
      <details>
        <summary>Table view</summary>
        <table aria-label={`${props.name} as a table`}>
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Persons</th>
              <th scope="col">Of the first step</th>
              <th scope="col">Of the previous step</th>
              <th scope="col">Median time</th>
            </tr>
          </thead>
          <tbody>
            {steps.map((s, i) => (
              <tr key={i}>
                <th scope="row">{`${i + 1}. ${s.name}`}</th>
                <td>{s.count}</td>
                <td>{`${s.percentOfFirst}%`}</td>
                <td>{`${s.percentOfPrevious}%`}</td>
                <td>{durationText(s.medianSeconds)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  )
}

/** Retention: a grid of cohorts (rows) by periods (columns), each cell shaded by the share that came back. */
export function RetentionChart(props: { name: string; results: unknown }) {
  const { periods, rows } = retentionGrid(props.results)
  const labelWidth = 90
  const cell = periods.length ? (WIDTH - labelWidth) / periods.length : WIDTH - labelWidth
  const rowHeight = 22
  const height = 20 + rows.length * rowHeight
  return (
    <figure class="chart insight-chart retention">
      <svg role="img" aria-label={props.name} viewBox={`0 0 ${WIDTH} ${height}`} style={{ height: `${Math.max(4, height / 16)}rem` }}>
        <title>{props.name}</title>
        {periods.map((p, k) => (
          <text key={k} x={labelWidth + (k + 0.5) * cell} y={14} text-anchor="middle" class="tick">
            {p}
          </text>
        ))}
        {rows.map((row, r) => (
          <g key={r}>
            <text x={labelWidth - 6} y={20 + r * rowHeight + 15} text-anchor="end" class="tick">
              {row.cohort}
            </text>
            {row.values.map((v, k) => (
              <g key={k}>
                <rect x={labelWidth + k * cell + 1} y={20 + r * rowHeight + 1} width={cell - 2} height={rowHeight - 2} fill={colourOf(0)} fill-opacity={0.08 + (v.percent / 100) * 0.8}>
                  <title>{`${row.cohort}, ${periods[k] ?? k}: ${v.count} of ${row.size} (${v.percent}%)`}</title>
                </rect>
                <text x={labelWidth + (k + 0.5) * cell} y={20 + r * rowHeight + 15} text-anchor="middle" class={v.percent > 50 ? 'tick on-dark' : 'tick'}>
                  {`${v.percent}%`}
                </text>
              </g>
            ))}
          </g>
        ))}
      </svg>
      <TableView name={props.name} corner="Cohort" headers={periods}>
        {rows.map((row, r) => (
          <tr key={r}>
            <th scope="row">{row.cohort}</th>
            {row.values.map((v, k) => (
              <td key={k}>{`${v.count} (${v.percent}%)`}</td>
            ))}
          </tr>
        ))}
      </TableView>
    </figure>
  )
}
