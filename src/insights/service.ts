// Every query kind of POST /query/: the node checked against its kind's schema, run by the kind's runner through the
// HogQL layer, answered with PostHog's envelope (is_cached, last_refresh, timezone, resolved_date_range, hogql), and
// kept a short while in a bounded cache so that a dashboard opened twice does not run its insights twice.
import { errors } from '../http/errors'
import type { QueryService } from '../query/service'
import { AnswerCache } from './cache'
import { resolveDateRange, type DateRangeInput, type Interval, type ResolvedDateRange } from './date-range'
import { QUERY_KINDS } from './model'
import { checkNode } from './validate'

export interface InsightProject {
  id: number
  timezone: string
  weekStartDay: number
}

/** What a kind's runner is given: the project, the clock, and the HogQL layer. */
export interface InsightContext {
  project: InsightProject
  now: number
  signal?: AbortSignal
  /** runs one HogQL query of the project; its text is kept for the answer's `hogql` */
  hogql(text: string): Promise<{ results: unknown[][]; columns: string[]; types?: string[]; hasMore: boolean }>
  /** the range of a query's dateRange in the project's timezone (`all` from the project's first event) */
  dateRange(input: DateRangeInput | null | undefined, interval: Interval): Promise<ResolvedDateRange>
}

/** A kind's answer: its own members, and the range it read (null when it has none). */
export interface KindAnswer {
  body: Record<string, unknown>
  range: ResolvedDateRange | null
}

export type KindRunner = (node: never, ctx: InsightContext) => Promise<KindAnswer>

/** Kinds that read raw rows (scripts expect what was just written): never answered from the cache. */
const UNCACHED_KINDS = new Set(['HogQLQuery', 'EventsQuery'])

/** The answer's `hogql` keeps the statements run up to this many characters (a kind reading many pages runs many). */
export const MAX_HOGQL_ECHO_CHARS = 64 * 1024

/** PostHog's refresh modes: which may answer from the cache. */
const CACHE_READING_MODES = new Set([undefined, null, false, 'blocking', 'async', 'lazy_async', 'force_cache'])

export interface InsightsOptions {
  /** answers kept this long (ms) */
  cacheTtlMs: number
  /** the cache's size in bytes of JSON */
  cacheMaxBytes: number
}

export class InsightsService {
  private readonly runners = new Map<string, KindRunner>()
  private readonly cache: AnswerCache

  constructor(
    private readonly query: QueryService,
    options: InsightsOptions,
  ) {
    this.cache = new AnswerCache(options.cacheMaxBytes, options.cacheTtlMs)
  }

  /** A kind served (HogQLQuery is built in). */
  register(kind: string, runner: KindRunner): this {
    this.runners.set(kind, runner)
    return this
  }

  async run(project: InsightProject, node: unknown, options: { refresh?: unknown; signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    const kind = (node as { kind?: unknown } | null)?.kind
    const schema = typeof kind === 'string' && (kind === 'HogQLQuery' || this.runners.has(kind)) ? QUERY_KINDS[kind] : undefined
    if (!schema) {
      const served = ['HogQLQuery', ...this.runners.keys()].join(', ')
      throw errors.validation('invalid_input', `Unknown query kind ${JSON.stringify(String(kind ?? '')).slice(0, 80)}: one of ${served}`, 'query__kind')
    }
    checkNode(schema, node)
    const key = UNCACHED_KINDS.has(kind as string) ? null : this.cache.key(project, node)
    if (key !== null && CACHE_READING_MODES.has(options.refresh as string)) {
      const cached = this.cache.get(key)
      if (cached) return { ...cached, is_cached: true }
    }
    const texts: string[] = []
    let echoed = 0
    let omitted = 0
    const now = Date.now()
    const ctx: InsightContext = {
      project,
      now,
      signal: options.signal,
      hogql: async (text) => {
        if (texts.length === 0 || echoed + text.length <= MAX_HOGQL_ECHO_CHARS) {
          texts.push(text)
          echoed += text.length
        } else omitted++
        return this.query.run(project.id, text, options.signal)
      },
      dateRange: async (input, interval) => {
        const firstEventAt = input?.date_from === 'all' ? await this.firstEventAt(project.id, options.signal) : undefined
        return resolveDateRange(input ?? {}, { now, timezone: project.timezone, weekStartDay: project.weekStartDay, interval, firstEventAt })
      },
    }
    const answer = kind === 'HogQLQuery' ? await this.hogqlQuery(node as { query: string }, ctx) : await this.runners.get(kind as string)!(node as never, ctx)
    const body: Record<string, unknown> = {
      ...answer.body,
      is_cached: false,
      last_refresh: new Date(now).toISOString(),
      timezone: project.timezone,
      resolved_date_range: answer.range ? { date_from: answer.range.date_from, date_to: answer.range.date_to } : null,
      hogql: texts.join(';\n\n') + (omitted > 0 ? `;\n\n-- and ${omitted} more statements like these` : ''),
    }
    if (key !== null) this.cache.set(key, body)
    return body
  }

  private async hogqlQuery(node: { query: string }, ctx: InsightContext): Promise<KindAnswer> {
    return { body: { ...(await ctx.hogql(node.query)) }, range: null }
  }

  /** The project's first event (for `date_from: "all"`); undefined when it has none. */
  private async firstEventAt(teamId: number, signal?: AbortSignal): Promise<number | undefined> {
    const answer = await this.query.run(teamId, 'SELECT min(timestamp) FROM events', signal)
    const first = answer.results[0]?.[0]
    const ms = typeof first === 'string' ? Date.parse(first) : NaN
    return Number.isFinite(ms) && ms > 0 ? ms : undefined
  }
}
