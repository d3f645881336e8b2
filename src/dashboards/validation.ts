// What an insight or dashboard write may hold, read the way PostHog's serializers read it, and bounded before
// anything is stored: every field is hostile input. Pure functions: the services call them, the unit tests too.
import { errors } from '../http/errors'
import { assertStorable, charField } from '../http/fields'
import { booleanMember, normalizeTags } from '../definitions/rules'

export const DASHBOARD_LIMITS = {
  nameLength: 400,
  descriptionLength: 4096,
  tags: 32,
  tagLength: 64,
  /** a saved query node as JSON text */
  queryBytes: 64 * 1024,
  /** nesting of a saved query node (objects and arrays) */
  queryDepth: 32,
  insightsPerProject: 10_000,
  dashboardsPerProject: 1_000,
  tilesPerDashboard: 100,
  /** an answer larger than this is computed on request, never stored */
  storedResultBytes: 1024 * 1024,
  /** stored answers one dashboard answer carries, all tiles together */
  dashboardResultBytes: 16 * 1024 * 1024,
  /** stored answers one project's dashboard reads hold at once; the rest wait their turn */
  projectResultBytesInFlight: 32 * 1024 * 1024,
  /** how long a dashboard read waits for that turn before 503 dashboard_busy (within QUERY_TIMEOUT_MS's default) */
  projectResultWaitMs: 25_000,
  /** stored answers read by one statement: other reads of the metadata store pass between them */
  resultReadBatchBytes: 2 * 1024 * 1024,
  /** tiles of one dashboard computed at the same time on ?refresh */
  refreshConcurrency: 2,
  /** dashboard refreshes one project runs at once; past it a dashboard answers its stored results */
  refreshesPerProject: 2,
  colorLength: 32,
  layoutsBytes: 4096,
} as const

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function fail(code: string, detail: string, attr: string | null): never {
  throw errors.validation(code, detail, attr)
}

/** Wrappers a saved insight may hold around its source, and the shape of a query kind's name. */
const WRAPPER_KINDS = new Set(['InsightVizNode', 'DataTableNode'])
const QUERY_KIND = /^[A-Z][A-Za-z]{0,63}Query$/

/** Deeper than `max` levels of objects and arrays? Stops at the first path past it (never walks the rest). */
function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (node === null || typeof node !== 'object') continue
    if (depth > max) return true
    for (const child of Object.values(node)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
  }
  return false
}

/**
 * A saved query node: depth and size first (before anything else looks inside), then its kind. The wrapper's
 * source is only named here; the query kind itself checks it when the insight runs.
 */
export function queryMember(value: unknown): Record<string, unknown> | null {
  if (value === null) return null
  if (!isObject(value)) fail('invalid_input', 'The query must be a query node object: {"kind": "InsightVizNode", "source": {…}}.', 'query')
  if (deeperThan(value, DASHBOARD_LIMITS.queryDepth)) fail('max_depth', `The query nests deeper than ${DASHBOARD_LIMITS.queryDepth} levels.`, 'query')
  const bytes = Buffer.byteLength(JSON.stringify(value))
  if (bytes > DASHBOARD_LIMITS.queryBytes) fail('max_length', `The query is ${bytes} bytes of JSON; at most ${DASHBOARD_LIMITS.queryBytes} are kept.`, 'query')
  assertStorable(value, 'query')
  const kind = value.kind
  if (typeof kind === 'string' && WRAPPER_KINDS.has(kind)) {
    if (!isObject(value.source) || typeof value.source.kind !== 'string' || !QUERY_KIND.test(value.source.kind)) {
      fail('invalid_input', `A ${kind} needs a "source" query node with a "kind" (e.g. "TrendsQuery").`, 'query')
    }
    return value
  }
  if (typeof kind === 'string' && QUERY_KIND.test(kind)) return value
  fail('invalid_input', `Unsupported query node kind ${JSON.stringify(String(kind ?? '')).slice(0, 80)}: use InsightVizNode, DataTableNode or a query node such as HogQLQuery.`, 'query')
}

/** The node a saved query runs: the wrapper's source, or the node itself. */
export function querySource(query: Record<string, unknown>): Record<string, unknown> {
  return WRAPPER_KINDS.has(String(query.kind)) && isObject(query.source) ? query.source : query
}

/** PostHog's tags, within our bounds: at most 32 of at most 64 characters. */
export function tagsField(value: unknown): string[] {
  if (Array.isArray(value) && value.length > 10 * DASHBOARD_LIMITS.tags) fail('max_length', `Ensure this field has no more than ${DASHBOARD_LIMITS.tags} elements.`, 'tags')
  const tags = normalizeTags(value)
  if (tags.length > DASHBOARD_LIMITS.tags) fail('max_length', `Ensure this field has no more than ${DASHBOARD_LIMITS.tags} elements.`, 'tags')
  if (tags.some((t) => t.length > DASHBOARD_LIMITS.tagLength)) fail('max_length', `Each tag may have at most ${DASHBOARD_LIMITS.tagLength} characters.`, 'tags')
  assertStorable(tags, 'tags')
  return tags
}

const nameField = (value: unknown, attr: string): string | null =>
  value === null ? null : charField(value, attr, { allowBlank: true, maxLength: DASHBOARD_LIMITS.nameLength })

const descriptionField = (value: unknown): string =>
  value === null ? '' : charField(value, 'description', { allowBlank: true, maxLength: DASHBOARD_LIMITS.descriptionLength })

/** A list of ids (`dashboards` of an insight): at most `max`, each a positive integer; duplicates dropped. */
export function idList(value: unknown, attr: string, max: number): number[] {
  if (!Array.isArray(value)) fail('not_a_list', 'Expected a list of items.', attr)
  if (value.length > max) fail('max_length', `Ensure this field has no more than ${max} elements.`, attr)
  for (const v of value) if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 2_147_483_647) fail('invalid_input', 'Each item must be a valid id (a positive integer).', attr)
  return [...new Set(value as number[])]
}

/** Legacy `filters`: an insight or dashboard is its query here; an empty object (what PostHog sends back) passes. */
function noLegacyFilters(value: unknown): void {
  if (value === null || value === undefined) return
  if (!isObject(value) || Object.keys(value).length > 0) fail('invalid_input', 'Legacy filters are not supported: describe the insight with "query".', 'filters')
}

function bodyObject(body: unknown): Record<string, unknown> {
  if (!isObject(body)) fail('invalid_input', 'Invalid data. Expected a dictionary.', null)
  return body
}

export interface InsightInput {
  name?: string | null
  derived_name?: string | null
  description?: string
  query?: Record<string, unknown> | null
  favorited?: boolean
  saved?: boolean
  deleted?: boolean
  tags?: string[]
  dashboards?: number[]
}

/** An insight's POST or PATCH body: the fields given, checked; unknown fields are ignored (as DRF does). */
export function validateInsightBody(body: unknown): InsightInput {
  const b = bodyObject(body)
  const has = (k: string) => b[k] !== undefined
  const out: InsightInput = {}
  if (has('name')) out.name = nameField(b.name, 'name')
  if (has('derived_name')) out.derived_name = nameField(b.derived_name, 'derived_name')
  if (has('description')) out.description = descriptionField(b.description)
  if (has('query')) out.query = queryMember(b.query)
  noLegacyFilters(b.filters)
  for (const k of ['favorited', 'saved', 'deleted'] as const) if (has(k)) out[k] = booleanMember(b[k], k)
  if (has('tags')) out.tags = tagsField(b.tags)
  if (has('dashboards')) out.dashboards = idList(b.dashboards, 'dashboards', DASHBOARD_LIMITS.dashboardsPerProject)
  return out
}

export interface TileInput {
  id: number
  deleted?: boolean
  color?: string | null
  layouts?: Record<string, unknown>
}

export interface DashboardInput {
  name?: string | null
  description?: string
  pinned?: boolean
  deleted?: boolean
  tags?: string[]
  tiles?: TileInput[]
}

function tileMember(value: unknown, index: number): TileInput {
  const attr = `tiles__${index}`
  if (!isObject(value)) fail('invalid_input', 'Each tile must be an object with its "id".', attr)
  if (typeof value.id !== 'number' || !Number.isInteger(value.id) || value.id < 1 || value.id > 2_147_483_647) fail('required', 'Each tile needs its "id".', `${attr}__id`)
  const tile: TileInput = { id: value.id }
  if (value.deleted !== undefined) tile.deleted = booleanMember(value.deleted, `${attr}__deleted`)
  if (value.color !== undefined) tile.color = value.color === null ? null : charField(value.color, `${attr}__color`, { allowBlank: true, maxLength: DASHBOARD_LIMITS.colorLength })
  if (value.layouts !== undefined && value.layouts !== null) {
    if (!isObject(value.layouts)) fail('invalid_input', 'Layouts must be an object.', `${attr}__layouts`)
    if (deeperThan(value.layouts, 4) || Buffer.byteLength(JSON.stringify(value.layouts)) > DASHBOARD_LIMITS.layoutsBytes) {
      fail('max_length', `Layouts may hold at most ${DASHBOARD_LIMITS.layoutsBytes} bytes of JSON, 4 levels deep.`, `${attr}__layouts`)
    }
    assertStorable(value.layouts, `${attr}__layouts`)
    tile.layouts = value.layouts
  }
  return tile
}

/** A dashboard's POST or PATCH body; `tiles` (PATCH only) changes or removes existing tiles by id. */
export function validateDashboardBody(body: unknown, method: 'POST' | 'PATCH'): DashboardInput {
  const b = bodyObject(body)
  const has = (k: string) => b[k] !== undefined
  const out: DashboardInput = {}
  if (has('name')) out.name = nameField(b.name, 'name')
  if (has('description')) out.description = descriptionField(b.description)
  for (const k of ['pinned', 'deleted'] as const) if (has(k)) out[k] = booleanMember(b[k], k)
  if (has('tags')) out.tags = tagsField(b.tags)
  noLegacyFilters(b.filters)
  if (method === 'POST' && (has('use_template') || has('use_dashboard'))) {
    fail('invalid_input', 'Dashboards are created empty here: add insights by setting their "dashboards".', has('use_template') ? 'use_template' : 'use_dashboard')
  }
  if (has('tiles') && method === 'PATCH') {
    if (!Array.isArray(b.tiles)) fail('not_a_list', 'Expected a list of items.', 'tiles')
    if (b.tiles.length > DASHBOARD_LIMITS.tilesPerDashboard) fail('max_length', `Ensure this field has no more than ${DASHBOARD_LIMITS.tilesPerDashboard} elements.`, 'tiles')
    out.tiles = b.tiles.map(tileMember)
  }
  return out
}

export type RefreshMode = 'cache' | 'blocking' | 'force'

/**
 * PostHog's `refresh` of an insight or dashboard read: absent, false or force_cache answer the stored result;
 * true and force_blocking compute now; blocking (and the async modes, which run blocking here) compute unless the
 * stored result is recent.
 */
export function refreshMode(raw: string | undefined): RefreshMode {
  if (raw === undefined || raw === '' || raw === 'false' || raw === 'force_cache' || raw === '0') return 'cache'
  if (raw === 'true' || raw === 'force_blocking' || raw === '1') return 'force'
  if (raw === 'blocking' || raw === 'async' || raw === 'lazy_async' || raw === 'force_async') return 'blocking'
  fail('invalid_choice', `"${raw.slice(0, 40)}" is not a valid choice: true, false, blocking, force_blocking or force_cache.`, 'refresh')
}
