// A lifecycle drawn as PostHog draws it: one stacked bar per period, new, returning and resurrecting persons above
// the axis and dormant ones below it, with a legend and the same numbers in a table view.
import { labelledIndexes } from '../lib/axis'
import { lifecycleBars, total, type TrendLine } from './chart-data'
import { HEIGHT, LEFT, signedAxis, TableView, ValueAxis, WIDTH } from './Charts'

/** PostHog's lifecycle colours: growth in green and blue, a return in purple, a loss in red. */
const COLOURS: Record<string, string> = { New: '#2f9e5b', Returning: '#1d4aff', Resurrecting: '#9b51e0', Dormant: '#db3f3f' }

export function LifecycleChart(props: { name: string; lines: TrendLine[]; partialLast?: boolean }) {
  const { labels, bars, min, max } = lifecycleBars(props.lines)
  const { ticks, y } = signedAxis(min, max)
  const statuses = bars[0]?.map((s) => s.status) ?? []
  const band = bars.length ? (WIDTH - LEFT) / bars.length : WIDTH - LEFT
  const width = Math.max(1, band * 0.7)
  const partial = props.partialLast === true && bars.length > 2
  return (
    <figure class="chart insight-chart">
      <svg role="img" aria-label={props.name} viewBox={`0 0 ${WIDTH} ${HEIGHT + 24}`} preserveAspectRatio="none">
        <title>{props.name}</title>
        <ValueAxis ticks={ticks} y={y} />
        {bars.map((segments, i) => (
          // the period still under way is lighter: its short bar is the period not being over, not a fall
          <g key={i} fill-opacity={partial && i === bars.length - 1 ? 0.45 : 1}>
            {segments.map((s) =>
              s.from === s.to ? null : (
                <rect key={s.status} x={LEFT + i * band + (band - width) / 2} y={y(Math.max(s.from, s.to))} width={width} height={Math.abs(y(s.from) - y(s.to))} fill={COLOURS[s.status]}>
                  <title>{`${labels[i] ?? ''}, ${s.status.toLowerCase()}: ${Math.abs(s.value)}`}</title>
                </rect>
              ),
            )}
          </g>
        ))}
        {labelledIndexes(labels.length, 5).map((i) => (
          // the first and last labels keep inside the chart: anchored at its edges
          <text
            key={i}
            x={i === labels.length - 1 ? LEFT + (i + 1) * band : i === 0 ? LEFT + i * band : LEFT + (i + 0.5) * band}
            y={HEIGHT + 16}
            text-anchor={i === labels.length - 1 ? 'end' : i === 0 ? 'start' : 'middle'}
            class="tick"
          >
            {labels[i]}
          </text>
        ))}
      </svg>
      <ul class="legend" aria-label="Legend">
        {statuses.map((status) => (
          <li key={status}>
            <svg width="12" height="12" aria-hidden="true">
              <rect width="12" height="12" fill={COLOURS[status]} />
            </svg>
            {status}
          </li>
        ))}
      </ul>
      {partial ? <p class="muted small">The last bar is the current period, not over yet (lighter).</p> : null}
      <TableView name={props.name} corner="When" headers={statuses}>
        {labels.map((label, row) => (
          <tr key={row}>
            <th scope="row">{label}</th>
            {bars[row].map((s) => (
              <td key={s.status}>{s.value}</td>
            ))}
          </tr>
        ))}
        <tr>
          <th scope="row">Total</th>
          {statuses.map((status, i) => (
            <td key={status}>{total(bars.map((b) => b[i]?.value ?? 0))}</td>
          ))}
        </tr>
      </TableView>
    </figure>
  )
}
