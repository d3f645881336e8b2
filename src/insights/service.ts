// Every query kind of POST /query/: the node checked against its kind's schema, run by the kind's runner through the
// HogQL layer, answered with PostHog's envelope (is_cached, last_refresh, timezone, resolved_date_range, hogql), and
// kept a short while in a bounded cache so that a dashboard opened twice does not run its insights twice.
import type { Static, TSchema } from 'elysia'
import { ApiError, errors } from '../http/errors'
import type { QueryService } from '../query/service'
import { AnswerCache } from './cache'
import { resolveDateRange, type DateRangeInput, type Interval, type ResolvedDateRange } from './date-range'
import { QUERY_KINDS } from './model'
import { MAX_PERSON_FILTERS, personFilters, personFiltersOfNode, propertiesCondition, type PersonsOfFilters } from './filters'
import { unsupported } from './hogql'
import type { Properties, PropertyFilter } from './model'
import type { PersonFilterAt, PersonSets } from './person-sets'
import { checkNode } from './validate'
import { entityResolver, type ActionLookup, type EntityMatch, type EntityRef } from './entities'

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
  /** the events a series, funnel step or retention entity counts (its event, or its action's steps), and its id, type and name */
  entity(node: EntityRef, attr: string): Promise<EntityMatch>
  /** a node's `properties` as one condition (null: none); person and cohort filters resolved to their persons */
  properties(input: PropertiesInput, attr: string): Promise<string | null>
  /** a property of these persons (uuids) as it is now, as text (null: absent) */
  personProperty(uuids: readonly string[], key: string, attr: string): Promise<Map<string, string | null>>
  /** the name of the project's group type at `index`; refused by `attr` when it has none there */
  groupTypeName(index: number, attr: string): Promise<string>
  /** a property of these groups (keys, of the type at `index`) as it is now, as text (null: absent) */
  groupProperty(index: number, groupKeys: readonly string[], key: string, attr: string): Promise<Map<string, string | null>>
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
  /** told of each query refused (400), by its code */
  onRefused?: (code: string) => void
  /** where ActionsNode series and steps find their actions (none: refused) */
  actions?: ActionLookup
}

export class InsightsService {
  private readonly runners = new Map<string, { run: KindRunner; schema: TSchema; cached: boolean }>()
  private readonly cache: AnswerCache

  constructor(
    private readonly query: QueryService,
    private readonly options: InsightsOptions,
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
    try {
      return await this.answer(project, node, options)
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) this.options.onRefused?.(error.code)
      throw error
    }
  }

  private async answer(project: InsightProject, node: unknown, options: { refresh?: unknown; signal?: AbortSignal }): Promise<Record<string, unknown>> {
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
    const personsOfQuery = this.personFiltersOf(project.id, served ? node : null)
    const texts: string[] = []
    let echoed = 0
    let omitted = 0
    const now = Date.now()
    // each action the query names is read and compiled once, its step filters by this query's own compiler
    const entity = entityResolver(project.id, this.options.actions, (input, attr) => ctx.properties(input, attr))
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
      entity,
      properties: async (input, attr) => {
        const wanted = personFilters(input, attr)
        if (wanted.length === 0 || !this.personSets) return propertiesCondition(input, attr)
        const all = await personsOfQuery()
        // a runner's own filters (not in the node) are resolved apart
        const persons = wanted.every(({ filter }) => all.has(filter)) ? all : await this.personSets.resolve(project.id, wanted)
        return propertiesCondition(input, attr, persons)
      },
      personProperty: async (uuids, key, attr) => {
        if (!this.personSets) return unsupported('Person properties are not available here', attr)
        return this.personSets.propertyOf(project.id, uuids, key)
      },
      groupTypeName: async (index, attr) => {
        if (!this.personSets) return unsupported('Groups are not available here', attr)
        const name = await this.personSets.groupTypeName(project.id, index)
        return name ?? unsupported(`This project has no group type at index ${index}`, attr)
      },
      groupProperty: async (index, groupKeys, key, attr) => {
        if (!this.personSets) return unsupported('Group properties are not available here', attr)
        return this.personSets.groupPropertyOf(project.id, index, groupKeys, key)
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

  /**
   * The node's person and cohort filters, counted before anything runs (each costs a scan of the project's persons
   * until resolved), then resolved together, once, when a runner first needs them: whatever the series and periods.
   */
  private personFiltersOf(teamId: number, node: unknown): () => Promise<PersonsOfFilters> {
    // the same filter written twice (each series, say) is one filter to the scan
    const distinct = new Map<string, PersonFilterAt[]>()
    for (const at of node === null ? [] : personFiltersOfNode(node)) {
      const same = JSON.stringify([at.filter.type, at.filter.key, at.filter.operator ?? null, at.filter.value ?? null])
      const list = distinct.get(same)
      if (list) list.push(at)
      else if (distinct.size < MAX_PERSON_FILTERS) distinct.set(same, [at])
      else {
        throw errors.validation('too_many_person_filters', `A query may carry at most ${MAX_PERSON_FILTERS} different person and cohort filters: filter on event properties, or on a cohort holding the persons`, at.attr)
      }
    }
    let resolved: Promise<PersonsOfFilters> | undefined
    const resolve = async (personSets: PersonSets): Promise<PersonsOfFilters> => {
      const firsts = [...distinct.values()].map((list) => list[0])
      const found = await personSets.resolve(teamId, firsts)
      const out = new Map<PropertyFilter, string[]>()
      for (const list of distinct.values()) for (const { filter } of list) out.set(filter, found.get(list[0].filter) ?? [])
      return out
    }
    return () => (resolved ??= distinct.size === 0 || !this.personSets ? Promise.resolve(new Map()) : resolve(this.personSets))
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
