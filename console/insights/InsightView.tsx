// An insight's answer drawn by its kind: the Insights page and every dashboard tile use this.
import { funnelGroups, lifecycleLines, trendLines } from './chart-data'
import { FunnelChart, RetentionChart, TrendChart } from './Charts'
import { LifecycleChart } from './LifecycleChart'
import { valueText } from '../lib/ui'

export function InsightView(props: { kind: string | undefined; result: unknown; name?: string; partialLast?: boolean }) {
  const { kind, result } = props
  if (result === null || result === undefined) return <p class="muted">No result yet: refresh to compute it.</p>
  if (kind === 'TrendsQuery') return <TrendChart name={props.name ?? 'Trend'} lines={trendLines(result)} partialLast={props.partialLast} />
  if (kind === 'FunnelsQuery') return <FunnelChart name={props.name ?? 'Funnel'} groups={funnelGroups(result)} />
  if (kind === 'LifecycleQuery') return <LifecycleChart name={props.name ?? 'Lifecycle'} lines={lifecycleLines(result)} partialLast={props.partialLast} />
  if (kind === 'StickinessQuery') return <TrendChart name={props.name ?? 'Stickiness'} lines={trendLines(result)} corner="Active in" />
  if (kind === 'RetentionQuery') return <RetentionChart name={props.name ?? 'Retention'} results={result} />
  // a HogQL insight: its rows as text
  const rows = Array.isArray(result) ? (result as unknown[]).slice(0, 50) : []
  return (
    <div class="scroll">
      <table aria-label={props.name ?? 'Rows'}>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {(Array.isArray(row) ? row : [row]).map((cell, j) => (
                <td key={j} class="mono">
                  {valueText(cell)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
