// The insight charts, SVG of our own: each an `svg` with role img and a name, a value axis in round steps, the
// dates along the bottom, a legend, and a table view (role table) with the same numbers.
import type { ComponentChildren } from 'preact'
import { axisTicks, labelledIndexes, tickText } from '../lib/axis'
import { colourOf, durationText, linePath, linearScale, retentionGrid, total, type FunnelGroup, type TrendLine } from './chart-data'

export const WIDTH = 640
export const LEFT = 44
export const HEIGHT = 180
const TOP_PAD = 10

export function ValueAxis(props: { ticks: number[]; y: (v: number) => number; tick?: (v: number) => string }) {
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
export function TableView(props: { name: string; corner: string; headers: string[]; children: ComponentChildren }) {
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

/** An axis that also reaches below zero (a lifecycle's dormant persons): the negative ticks mirror the positive ones. */
export function signedAxis(min: number, max: number) {
  if (min >= 0) return valueAxis(max)
  const up = max > 0 ? axisTicks(max) : [0]
  const down = axisTicks(-min).map((t) => -t)
  const hi = up[up.length - 1]
  const lo = down[down.length - 1]
  const ticks = [...down.slice(1).reverse(), ...up]
  return { ticks, y: (v: number) => HEIGHT - ((v - lo) / (hi - lo || 1)) * (HEIGHT - TOP_PAD) }
}

/** A trend: one line per series (or breakdown value, or period), the dates of the first along the bottom. */
export function TrendChart(props: { name: string; lines: TrendLine[]; corner?: string; partialLast?: boolean }) {
  const { lines } = props
  const max = Math.max(0, ...lines.flatMap((l) => l.values))
  const min = Math.min(0, ...lines.flatMap((l) => l.values))
  const { ticks, y } = signedAxis(min, max)
  const labels = lines[0]?.labels ?? []
  const n = Math.max(0, ...lines.map((l) => l.values.length))
  const plot = WIDTH - LEFT - 8
  const x = (i: number) => LEFT + (n > 1 ? (i * plot) / (n - 1) : plot / 2)
  return (
    <figure class="chart insight-chart">
      <svg role="img" aria-label={props.name} viewBox={`0 0 ${WIDTH} ${HEIGHT + 24}`} preserveAspectRatio="none">
        <title>{props.name}</title>
        <ValueAxis ticks={ticks} y={y} />
        {lines.map((line, i) => {
          // the period still under way is dashed, as PostHog draws it: its dip is the day not being over, not a fall
          const dashLast = props.partialLast === true && !line.previous && line.values.length > 2
          const solid = dashLast ? linePath(line.values.slice(0, -1), LEFT, (plot * (line.values.length - 2)) / (line.values.length - 1), y) : linePath(line.values, LEFT, plot, y)
          const k = line.values.length - 1
          return (
            <g key={i}>
              <path d={solid} fill="none" stroke={colourOf(i)} stroke-width="2" stroke-dasharray={line.previous ? '5 4' : undefined} vector-effect="non-scaling-stroke">
                <title>{line.label}</title>
              </path>
              {dashLast ? (
                <path d={`M${x(k - 1)},${y(line.values[k - 1])} L${x(k)},${y(line.values[k])}`} fill="none" stroke={colourOf(i)} stroke-width="2" stroke-dasharray="3 4" vector-effect="non-scaling-stroke">
                  <title>{`${line.label}: ${labels[k] ?? ''} is not over yet`}</title>
                </path>
              ) : null}
            </g>
          )
        })}
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
      {props.partialLast && n > 2 ? <p class="muted small">The last point is the current period, not over yet (dotted).</p> : null}
      <TableView name={props.name} corner={props.corner ?? 'When'} headers={lines.map((l) => l.label)}>
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
            <td key={i}>{l.additive === false ? '—' : total(l.values)}</td>
          ))}
        </tr>
      </TableView>
    </figure>
  )
}

/**
 * A funnel: a bar per step (persons), the conversion from the first step written on it; broken down, one funnel per
 * value side by side in each step (each value's persons are its own funnel, as the API answers them).
 */
export function FunnelChart(props: { name: string; groups: FunnelGroup[] }) {
  const { groups } = props
  const grouped = groups.length > 1 || (groups[0]?.value ?? null) !== null
  const steps = groups[0]?.steps ?? []
  const max = Math.max(0, ...groups.flatMap((g) => g.steps.map((s) => s.count)))
  const { ticks, y } = valueAxis(max)
  const plot = WIDTH - LEFT
  const band = steps.length ? plot / steps.length : plot
  const inner = (band * 0.8) / Math.max(1, groups.length)
  return (
    <figure class="chart insight-chart">
      <svg role="img" aria-label={props.name} viewBox={`0 0 ${WIDTH} ${HEIGHT + 24}`} preserveAspectRatio="none">
        <title>{props.name}</title>
        <ValueAxis ticks={ticks} y={y} />
        {steps.map((step, i) => (
          <g key={i}>
            {groups.map((g, j) => {
              const s = g.steps[i]
              if (!s) return null
              const x = LEFT + i * band + band * 0.1 + j * inner
              return (
                <g key={j}>
                  <rect x={x} y={y(s.count)} width={Math.max(1, inner - 2)} height={HEIGHT - y(s.count)} class={grouped ? undefined : 'bar'} fill={grouped ? colourOf(j) : undefined}>
                    <title>{`${grouped ? `${g.value}: ` : ''}${i + 1}. ${s.name}: ${s.count} persons, ${s.percentOfFirst}%`}</title>
                  </rect>
                  {groups.length <= 4 ? (
                    <text x={x + inner / 2} y={Math.max(TOP_PAD + 10, y(s.count) - 4)} text-anchor="middle" class="tick">
                      {`${s.percentOfFirst}%`}
                    </text>
                  ) : null}
                </g>
              )
            })}
            <text x={LEFT + (i + 0.5) * band} y={HEIGHT + 16} text-anchor="middle" class="tick">
              {`${i + 1}. ${step.name}`}
            </text>
          </g>
        ))}
      </svg>
      {grouped ? <Legend items={groups.map((g) => ({ label: g.value ?? '' }))} /> : null}
      <figcaption class="muted">
        {groups
          .filter((g) => g.steps.length > 1)
          .map((g) => `${grouped ? `${g.value}: ` : ''}${g.steps[g.steps.length - 1].percentOfFirst}% of ${g.steps[0].count} persons converted`)
          .join('; ')}
      </figcaption>
      <details>
        <summary>Table view</summary>
        <table aria-label={`${props.name} as a table`}>
          <thead>
            <tr>
              <th scope="col">Step</th>
              {grouped ? <th scope="col">Breakdown</th> : null}
              <th scope="col">Persons</th>
              <th scope="col">Of the first step</th>
              <th scope="col">Of the previous step</th>
              <th scope="col">Median time</th>
            </tr>
          </thead>
          <tbody>
            {groups.flatMap((g, j) =>
              g.steps.map((s, i) => (
                <tr key={`${j}-${i}`}>
                  <th scope="row">{`${i + 1}. ${s.name}`}</th>
                  {grouped ? <td>{g.value}</td> : null}
                  <td>{s.count}</td>
                  <td>{`${s.percentOfFirst}%`}</td>
                  <td>{`${s.percentOfPrevious}%`}</td>
                  <td>{durationText(s.medianSeconds)}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      </details>
    </figure>
  )
}

/** Retention: a grid of cohorts (rows) by periods (columns), each cell shaded by the share that came back. */
export function RetentionChart(props: { name: string; results: unknown }) {
  const { periods, rows } = retentionGrid(props.results)
  const labelWidth = 110
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
              {`${row.cohort} (${row.size})`}
            </text>
            {row.values.map((v, k) =>
              v === null ? null : (
              <g key={k}>
                <rect x={labelWidth + k * cell + 1} y={20 + r * rowHeight + 1} width={cell - 2} height={rowHeight - 2} fill={colourOf(0)} fill-opacity={0.08 + (v.percent / 100) * 0.8}>
                  <title>{`${row.cohort}, ${periods[k] ?? k}: ${v.count} of ${row.size} (${v.percent}%)`}</title>
                </rect>
                <text x={labelWidth + (k + 0.5) * cell} y={20 + r * rowHeight + 15} text-anchor="middle" class={v.percent > 50 ? 'tick on-dark' : 'tick'}>
                  {`${v.percent}%`}
                </text>
              </g>
              ),
            )}
          </g>
        ))}
      </svg>
      <TableView name={props.name} corner="Cohort" headers={['Cohort size', ...periods]}>
        {rows.map((row, r) => (
          <tr key={r}>
            <th scope="row">{row.cohort}</th>
            <td>{row.size}</td>
            {row.values.map((v, k) => (
              <td key={k}>{v === null ? '' : `${v.count} (${v.percent}%)`}</td>
            ))}
          </tr>
        ))}
      </TableView>
    </figure>
  )
}
