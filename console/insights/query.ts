// The query nodes the Insights page sends, built from its forms (pure: unit-tested in query.test.ts). Only what a
// person typed goes in, as values: the server checks every node by its own schema.

/** An action chosen as a series or a step (its name labels the line or the step). */
export interface ActionChoice {
  id: number
  name: string
}

export interface SeriesForm {
  /** '' means every event */
  event: string
  math: string
  mathProperty: string
  /** when set, the series counts this action's events instead of `event` */
  action?: ActionChoice | null
}

export interface FilterForm {
  key: string
  operator: string
  value: string
  /** whose property is filtered: the event's (default), the person's, or membership of a cohort (value: its id) */
  type?: 'event' | 'person' | 'cohort'
}

export const COHORT_OPERATORS: [value: string, label: string][] = [
  ['in', 'in the cohort'],
  ['not_in', 'not in the cohort'],
]

export interface TrendForm {
  series: SeriesForm[]
  filter: FilterForm
  breakdown: string
  /** whose property the breakdown reads: the event's, or the person's (as they are now) */
  breakdownType: 'event' | 'person'
  interval: 'hour' | 'day' | 'week' | 'month'
  dateFrom: string
  compare: boolean
}

export interface FunnelForm {
  steps: string[]
  /** per step, an action used instead of the step's event (absent or null: the event) */
  stepActions?: (ActionChoice | null)[]
  windowInterval: number
  windowUnit: string
  order: 'ordered' | 'strict' | 'unordered'
  dateFrom: string
  breakdown: string
  /** whose property the breakdown reads (absent: the event's) */
  breakdownType?: 'event' | 'person'
}

export const MATHS: [value: string, label: string][] = [
  ['total', 'Total count'],
  ['dau', 'Unique users'],
  ['unique_session', 'Unique sessions'],
  ['weekly_active', 'Weekly active users'],
  ['monthly_active', 'Monthly active users'],
  ['sum', 'Sum of a property'],
  ['avg', 'Average of a property'],
  ['min', 'Minimum of a property'],
  ['max', 'Maximum of a property'],
  ['median', 'Median of a property'],
]
/** the maths that read `math_property` */
export const PROPERTY_MATHS = new Set(['sum', 'avg', 'min', 'max', 'median'])

export const OPERATORS: [value: string, label: string][] = [
  ['exact', 'equals'],
  ['is_not', 'does not equal'],
  ['icontains', 'contains'],
  ['not_icontains', 'does not contain'],
  ['gt', 'greater than'],
  ['lt', 'less than'],
  ['is_set', 'is set'],
  ['is_not_set', 'is not set'],
]
const VALUELESS = new Set(['is_set', 'is_not_set'])

export const DATE_RANGES: [value: string, label: string][] = [
  ['-24h', 'Last 24 hours'],
  ['-7d', 'Last 7 days'],
  ['-14d', 'Last 14 days'],
  ['-30d', 'Last 30 days'],
  ['-90d', 'Last 90 days'],
  ['-180d', 'Last 180 days'],
  ['-1y', 'Last year'],
  ['all', 'All time'],
]

export const INTERVALS: [value: TrendForm['interval'], label: string][] = [
  ['hour', 'Hour'],
  ['day', 'Day'],
  ['week', 'Week'],
  ['month', 'Month'],
]

export const WINDOW_UNITS = ['minute', 'hour', 'day', 'week', 'month']
export const ORDERS: [value: FunnelForm['order'], label: string][] = [
  ['ordered', 'In order (others between)'],
  ['strict', 'Strictly in order'],
  ['unordered', 'Any order'],
]

export function newTrendForm(): TrendForm {
  return { series: [{ event: '$pageview', math: 'total', mathProperty: '' }], filter: { key: '', operator: 'exact', value: '', type: 'event' }, breakdown: '', breakdownType: 'event', interval: 'day', dateFrom: '-7d', compare: false }
}

export function newFunnelForm(): FunnelForm {
  return { steps: ['$pageview', ''], windowInterval: 14, windowUnit: 'day', order: 'ordered', dateFrom: '-30d', breakdown: '', breakdownType: 'event' }
}

function eventsNode(event: string): Record<string, unknown> {
  return { kind: 'EventsNode', event: event.trim() === '' ? null : event.trim(), name: event.trim() === '' ? 'All events' : event.trim() }
}

/** A series or a step: PostHog's ActionsNode when an action is chosen, else the event's EventsNode. */
function entityNode(event: string, action: ActionChoice | null | undefined): Record<string, unknown> {
  return action ? { kind: 'ActionsNode', id: action.id, name: action.name } : eventsNode(event)
}

/** A filter as PostHog writes it: numbers for gt/lt, no value for is_set. */
function propertyFilter(filter: FilterForm): Record<string, unknown>[] {
  if (filter.type === 'cohort') {
    const id = Number(filter.value)
    return Number.isInteger(id) && id > 0 ? [{ key: 'id', value: id, type: 'cohort', operator: filter.operator === 'not_in' ? 'not_in' : 'in' }] : []
  }
  const key = filter.key.trim()
  if (!key) return []
  const base = { key, operator: filter.operator, type: filter.type === 'person' ? 'person' : 'event' }
  if (VALUELESS.has(filter.operator)) return [base]
  const numeric = filter.operator === 'gt' || filter.operator === 'lt'
  const value = numeric && filter.value.trim() !== '' && Number.isFinite(Number(filter.value)) ? Number(filter.value) : filter.value
  return [{ ...base, value }]
}

export function trendsQuery(form: TrendForm): Record<string, unknown> {
  const node: Record<string, unknown> = {
    kind: 'TrendsQuery',
    series: form.series.map((s) => {
      const series = { ...entityNode(s.event, s.action), math: s.math }
      return PROPERTY_MATHS.has(s.math) ? { ...series, math_property: s.mathProperty.trim() } : series
    }),
    interval: form.interval,
    dateRange: { date_from: form.dateFrom },
  }
  const properties = propertyFilter(form.filter)
  if (properties.length) node.properties = properties
  if (form.breakdown.trim()) node.breakdownFilter = { breakdown: form.breakdown.trim(), breakdown_type: form.breakdownType, breakdown_limit: 10 }
  if (form.compare) node.compareFilter = { compare: true }
  return node
}

export function funnelsQuery(form: FunnelForm): Record<string, unknown> {
  const node: Record<string, unknown> = {
    kind: 'FunnelsQuery',
    series: form.steps.map((step, i) => entityNode(step, form.stepActions?.[i])),
    dateRange: { date_from: form.dateFrom },
    funnelsFilter: { funnelWindowInterval: form.windowInterval, funnelWindowIntervalUnit: form.windowUnit, funnelOrderType: form.order },
  }
  if (form.breakdown.trim()) node.breakdownFilter = { breakdown: form.breakdown.trim(), breakdown_type: form.breakdownType ?? 'event', breakdown_limit: 10 }
  return node
}

export const PERIODS = ['Day', 'Week', 'Month'] as const
export const RETENTION_TYPES: [value: string, label: string][] = [
  ['retention_recurring', 'Recurring (every period with the first event)'],
  ['retention_first_time', 'First time (the first event ever)'],
]

export interface RetentionForm {
  targetEvent: string
  returningEvent: string
  dateFrom: string
  period: (typeof PERIODS)[number]
  retentionType: string
}

export function newRetentionForm(): RetentionForm {
  return { targetEvent: '$pageview', returningEvent: '$pageview', dateFrom: '-7d', period: 'Day', retentionType: 'retention_recurring' }
}

/** How many periods a row holds: the range's periods, at least 2 and at most the API's 100. */
export function retentionIntervals(form: RetentionForm): number {
  const days = /^-(\d+)([dhwmy])$/.exec(form.dateFrom)
  const span = days ? Number(days[1]) * ({ h: 1 / 24, d: 1, w: 7, m: 30, y: 365 } as Record<string, number>)[days[2]] : 30
  const per = form.period === 'Day' ? 1 : form.period === 'Week' ? 7 : 30
  return Math.min(100, Math.max(2, Math.ceil(span / per) + 1))
}

export function retentionQuery(form: RetentionForm): Record<string, unknown> {
  return {
    kind: 'RetentionQuery',
    dateRange: { date_from: form.dateFrom },
    retentionFilter: {
      period: form.period,
      retentionType: form.retentionType,
      totalIntervals: retentionIntervals(form),
      targetEntity: { id: form.targetEvent || null, type: 'events' },
      returningEntity: { id: form.returningEvent || null, type: 'events' },
    },
  }
}

export interface LifecycleForm {
  event: string
  interval: TrendForm['interval']
  dateFrom: string
}

export function newLifecycleForm(): LifecycleForm {
  return { event: '$pageview', interval: 'day', dateFrom: '-7d' }
}

export function lifecycleQuery(form: LifecycleForm): Record<string, unknown> {
  return { kind: 'LifecycleQuery', series: [eventsNode(form.event)], interval: form.interval, dateRange: { date_from: form.dateFrom } }
}

export function stickinessQuery(form: LifecycleForm): Record<string, unknown> {
  return { kind: 'StickinessQuery', series: [eventsNode(form.event)], interval: form.interval, dateRange: { date_from: form.dateFrom } }
}

/** The lifecycle or stickiness form of a saved query of that kind. */
export function lifecycleFormOf(node: Record<string, any>): LifecycleForm {
  const base = newLifecycleForm()
  const first = Array.isArray(node.series) ? node.series[0] : undefined
  return {
    event: typeof first?.event === 'string' ? first.event : '',
    interval: INTERVALS.some(([v]) => v === node.interval) ? node.interval : base.interval,
    dateFrom: typeof node.dateRange?.date_from === 'string' ? node.dateRange.date_from : base.dateFrom,
  }
}

/** What is missing before a query can be sent (null: ready). */
export function trendProblem(form: TrendForm): string | null {
  const index = form.series.findIndex((s) => PROPERTY_MATHS.has(s.math) && !s.mathProperty.trim())
  return index >= 0 ? `Series ${seriesLetter(index)} needs a property for its math.` : null
}

export function funnelProblem(form: FunnelForm): string | null {
  if (form.steps.length < 2) return 'A funnel needs at least two steps.'
  // an empty step would mean "any event", which makes a new funnel look converted before it is built
  const empty = form.steps.findIndex((step, i) => i > 0 && !step.trim() && !form.stepActions?.[i])
  return empty > 0 ? `Step ${empty + 1} needs an event or an action.` : null
}

export function seriesLetter(index: number): string {
  return String.fromCharCode(65 + (index % 26))
}

/** The saved insight's source node, whatever wrapper it was saved in. */
export function sourceOf(query: unknown): Record<string, any> | null {
  if (!query || typeof query !== 'object') return null
  const node = query as Record<string, any>
  if ((node.kind === 'InsightVizNode' || node.kind === 'DataTableNode') && node.source && typeof node.source === 'object') return node.source
  return node
}

/** The action of a saved ActionsNode (null for an EventsNode). */
function actionOf(node: any): ActionChoice | null {
  if (node?.kind !== 'ActionsNode') return null
  const id = Number(node.id)
  if (!Number.isInteger(id) || id <= 0) return null
  return { id, name: typeof node.name === 'string' && node.name ? node.name : `Action ${id}` }
}

/** The trend form of a saved TrendsQuery (what the form cannot show, e.g. a second filter, is left out). */
export function trendFormOf(node: Record<string, any>): TrendForm {
  const base = newTrendForm()
  const series = Array.isArray(node.series) && node.series.length ? node.series.slice(0, 5) : base.series
  const first = Array.isArray(node.properties) ? node.properties.find((p: any) => p && typeof p.key === 'string') : undefined
  const interval = INTERVALS.some(([v]) => v === node.interval) ? node.interval : base.interval
  return {
    series: series.map((s: any) => ({
      event: typeof s?.event === 'string' ? s.event : '',
      math: typeof s?.math === 'string' ? s.math : 'total',
      mathProperty: typeof s?.math_property === 'string' ? s.math_property : '',
      ...(actionOf(s) ? { action: actionOf(s) } : {}),
    })),
    filter: first
      ? {
          key: first.key,
          operator: typeof first.operator === 'string' ? first.operator : first.type === 'cohort' ? 'in' : 'exact',
          value: first.value === undefined || first.value === null ? '' : String(first.value),
          type: first.type === 'person' || first.type === 'cohort' ? first.type : 'event',
        }
      : base.filter,
    breakdown: typeof node.breakdownFilter?.breakdown === 'string' ? node.breakdownFilter.breakdown : '',
    breakdownType: node.breakdownFilter?.breakdown_type === 'person' ? 'person' : 'event',
    interval,
    dateFrom: typeof node.dateRange?.date_from === 'string' ? node.dateRange.date_from : base.dateFrom,
    compare: node.compareFilter?.compare === true,
  }
}

/** The funnel form of a saved FunnelsQuery. */
export function funnelFormOf(node: Record<string, any>): FunnelForm {
  const base = newFunnelForm()
  const filter = node.funnelsFilter ?? {}
  const saved = Array.isArray(node.series) && node.series.length >= 2 ? node.series.slice(0, 20) : null
  const steps = saved ? saved.map((s: any) => (typeof s?.event === 'string' ? s.event : '')) : base.steps
  const stepActions = saved ? saved.map(actionOf) : []
  return {
    steps,
    ...(stepActions.some(Boolean) ? { stepActions } : {}),
    windowInterval: Number.isInteger(filter.funnelWindowInterval) ? filter.funnelWindowInterval : base.windowInterval,
    windowUnit: WINDOW_UNITS.includes(filter.funnelWindowIntervalUnit) ? filter.funnelWindowIntervalUnit : base.windowUnit,
    order: ORDERS.some(([v]) => v === filter.funnelOrderType) ? filter.funnelOrderType : base.order,
    dateFrom: typeof node.dateRange?.date_from === 'string' ? node.dateRange.date_from : base.dateFrom,
    breakdown: typeof node.breakdownFilter?.breakdown === 'string' ? node.breakdownFilter.breakdown : '',
    breakdownType: node.breakdownFilter?.breakdown_type === 'person' ? 'person' : 'event',
  }
}

/** The retention form of a saved RetentionQuery. */
export function retentionFormOf(node: Record<string, any>): RetentionForm {
  const filter = node.retentionFilter ?? {}
  const eventOf = (entity: any) => (typeof entity?.id === 'string' ? entity.id : '')
  return {
    targetEvent: eventOf(filter.targetEntity),
    returningEvent: eventOf(filter.returningEntity),
    dateFrom: typeof node.dateRange?.date_from === 'string' ? node.dateRange.date_from : '-7d',
    period: PERIODS.includes(filter.period) ? filter.period : 'Day',
    retentionType: filter.retentionType === 'retention_first_time' ? 'retention_first_time' : 'retention_recurring',
  }
}
