// What the Web analytics page shows, from WebOverviewQuery and WebStatsTableQuery answers (pure: unit-tested in
// web-data.test.ts).

export interface Figure {
  /** the figure's name as the page shows it ("Visitors", …) */
  name: string
  value: string
  /** "+8% from the previous period", or null without a comparison */
  change: string | null
  /** whether the change is good news (bounce rate going up is not) */
  good: boolean | null
}

/** The API's overview keys, in the order and with the names the page shows. */
export const FIGURES: [key: string, name: string][] = [
  ['visitors', 'Visitors'],
  ['views', 'Views'],
  ['sessions', 'Sessions'],
  ['session duration', 'Session duration'],
  ['bounce rate', 'Bounce rate'],
]

/** Seconds as minutes and seconds ("3m 05s"), as PostHog writes a session's length. */
export function secondsText(seconds: number): string {
  const whole = Math.round(seconds)
  if (whole < 60) return `${whole}s`
  const m = Math.floor(whole / 60)
  const s = whole % 60
  if (m < 60) return `${m}m ${String(s).padStart(2, '0')}s`
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`
}

/** A number with at most `digits` decimals and no float noise (383.93999999999994 → 383.94). */
export function roundText(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return '—'
  return String(Number(value.toFixed(digits)))
}

function valueText(kind: string, value: unknown): string {
  if (typeof value !== 'number') return '—'
  if (kind === 'duration_s') return secondsText(value)
  if (kind === 'percentage') return `${roundText(value, 1)}%`
  return roundText(value)
}

/** The five figures of a WebOverviewQuery answer, each with its change from the previous period when compared. */
export function overviewFigures(results: unknown): Figure[] {
  const items = Array.isArray(results) ? (results as any[]) : []
  return FIGURES.map(([key, name]) => {
    const item = items.find((i) => i?.key === key) ?? {}
    const pct = item.changeFromPreviousPct
    let change: string | null = null
    let good: boolean | null = null
    if (typeof pct === 'number') {
      change = `${pct > 0 ? '+' : ''}${pct}% from the previous period`
      good = pct === 0 ? null : (pct > 0) !== (item.isIncreaseBad === true)
    } else if (item.previous !== undefined && item.previous !== null) {
      change = `previously ${valueText(String(item.kind ?? ''), item.previous)}`
    }
    return { name, value: valueText(String(item.kind ?? ''), item.value), change, good }
  })
}

export interface StatsRow {
  /** the page, referrer, device…; "(none)" for an absent value */
  value: string
  visitors: number
  views: number
  /** percent, or null when the table has no bounce rate */
  bounceRate: number | null
}

/** A WebStatsTableQuery answer's rows, read by its column names (each metric is a [current, previous] pair). */
export function statsRows(answer: { columns?: unknown; results?: unknown } | null | undefined): StatsRow[] {
  const columns = Array.isArray(answer?.columns) ? (answer!.columns as unknown[]).map(String) : []
  const at = (name: string) => columns.findIndex((c) => c === `context.columns.${name}` || c === name)
  const [value, visitors, views, bounce] = [at('breakdown_value'), at('visitors'), at('views'), at('bounce_rate')]
  const current = (cell: unknown) => (Array.isArray(cell) ? cell[0] : cell)
  const rows = Array.isArray(answer?.results) ? (answer!.results as unknown[][]) : []
  return rows.map((row) => {
    const raw = value >= 0 ? row[value] : null
    return {
      value: raw === null || raw === undefined || raw === '' ? '(none)' : String(raw),
      visitors: Number(current(visitors >= 0 ? row[visitors] : 0)) || 0,
      views: Number(current(views >= 0 ? row[views] : 0)) || 0,
      bounceRate: bounce >= 0 && typeof current(row[bounce]) === 'number' ? (current(row[bounce]) as number) : null,
    }
  })
}
