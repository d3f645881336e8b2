// Every query kind of POST /query/: the node checked against its kind's schema, run by the kind's runner through the
// HogQL layer, answered with PostHog's envelope (is_cached, last_refresh, timezone, resolved_date_range, hogql), and
// kept a short while in a bounded cache so that a dashboard opened twice does not run its insights twice.
import type { Static, TSchema } from 'elysia'
import { errors } from '../http/errors'
import type { QueryService } from '../query/service'
import { AnswerCache } from './cache'
import { resolveDateRange, type DateRangeInput, type Interval, type ResolvedDateRange } from './date-range'
import { QUERY_KINDS } from './model'
import { personFilters, propertiesCondition } from './filters'
import { unsupported } from './hogql'
import type { Properties } from './model'
import type { PersonSets } from './person-sets'
import { checkNode } from './validate'

type PropertiesInput = Static<typeof Properties> | undefined

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
  /** a node's `properties` as one condition (null: none); person and cohort filters resolved to their persons */
  properties(input: PropertiesInput, attr: string): Promise<string | null>
  /** a property of these persons (uuids) as it is now, as text (null: absent) */
  personProperty(uuids: readonly string[], key: string, attr: string): Promise<Map<string, string | null>>
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

export interface KindOptions {
  /** the node's schema (default: the one of that name in model.ts) */
  schema?: TSchema
  /** false: always computed (results a team watches change, such as an experiment's) */
  cached?: boolean
}

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
  private readonly runners = new Map<string, { run: KindRunner; schema: TSchema; cached: boolean }>()
  private readonly cache: AnswerCache

  constructor(
    private readonly query: QueryService,
    options: InsightsOptions,
    /** where person and cohort filters find their persons (none: such filters are refused) */
    private readonly personSets?: PersonSets,
  ) {
    this.cache = new AnswerCache(options.cacheMaxBytes, options.cacheTtlMs)
  }

  /** A kind served (HogQLQuery is built in). */
  register(kind: string, run: KindRunner, options: KindOptions = {}): this {
    const schema = options.schema ?? QUERY_KINDS[kind]
    if (!schema) throw new Error(`No schema for the query kind ${kind}`)
    this.runners.set(kind, { run, schema, cached: options.cached ?? !UNCACHED_KINDS.has(kind) })
    return this
  }

  async run(project: InsightProject, node: unknown, options: { refresh?: unknown; signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    const kind = (node as { kind?: unknown } | null)?.kind
    const served = typeof kind === 'string' ? this.runners.get(kind) : undefined
    const schema = kind === 'HogQLQuery' ? QUERY_KINDS.HogQLQuery : served?.schema
    if (!schema) {
      const kinds = ['HogQLQuery', ...this.runners.keys()].join(', ')
      throw errors.validation('invalid_input', `Unknown query kind ${JSON.stringify(String(kind ?? '')).slice(0, 80)}: one of ${kinds}`, 'query__kind')
    }
    checkNode(schema, node)
    const key = served?.cached ? this.cache.key(project, node) : null
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
      properties: async (input, attr) => {
        const wanted = personFilters(input, attr)
        if (wanted.length === 0 || !this.personSets) return propertiesCondition(input, attr)
        return propertiesCondition(input, attr, await this.personSets.resolve(project.id, wanted))
      },
      personProperty: async (uuids, key, attr) => {
        if (!this.personSets) return unsupported('Person properties are not available here', attr)
        return this.personSets.propertyOf(project.id, uuids, key)
      },
      dateRange: async (input, interval) => {
        const firstEventAt = input?.date_from === 'all' ? await this.firstEventAt(project.id, options.signal) : undefined
        return resolveDateRange(input ?? {}, { now, timezone: project.timezone, weekStartDay: project.weekStartDay, interval, firstEventAt })
      },
    }
    const answer = served ? await served.run(node as never, ctx) : await this.hogqlQuery(node as { query: string }, ctx)
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
