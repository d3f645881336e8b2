// phog's bench flags (PostHog filters) and its /decide bodies in each peer's own terms: GrowthBook features
// (conditions, coverage, experiment rules) and Unleash toggles (flexibleRollout strategies, constraints, variants).
// A flag's groups are OR-ed and its properties AND-ed on every side; what a peer cannot say is translated to its
// nearest equivalent, named in docs/benchmarks.md ("Peers").

interface Property {
  key: string
  value: unknown
  operator?: string
  type: 'person' | 'group'
  group_type_index?: number
}
interface Group {
  properties: Property[]
  rollout_percentage: number | null
  variant?: string
}
interface Filters {
  groups: Group[]
  aggregation_group_type_index?: number
  multivariate?: { variants: { key: string; rollout_percentage: number }[] }
  payloads?: Record<string, string>
}
export interface PosthogFlag {
  key: string
  filters: Filters
}

/** Group type index → name, as the bench's $groupidentify taught phog (index 0 is 'company'). */
const GROUP_TYPES = ['company']

const groupType = (index: number | undefined): string => {
  const name = GROUP_TYPES[index ?? -1]
  if (!name) throw new Error(`no group type at index ${index}`)
  return name
}
/** A property's attribute name on the peers: person properties as they are, a group's as `<type>_<key>`. */
const attributeOf = (p: Property) => (p.type === 'group' ? `${groupType(p.group_type_index)}_${p.key}` : p.key)
const listOf = (value: unknown) => (Array.isArray(value) ? value : [value]).map(String)
const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** `-30d`, `-2w`, `-6m`, `-1y` from `now`: the fixed instant a peer without relative dates compares against. */
export function relativeDate(value: string, now: number): Date {
  const m = /^-?(\d+)([hdwmy])$/.exec(value)
  if (!m) return new Date(value)
  const days = { h: 1 / 24, d: 1, w: 7, m: 30, y: 365 }[m[2] as 'h' | 'd' | 'w' | 'm' | 'y']
  return new Date(now - Number(m[1]) * days * 86_400_000)
}

const percent = (rollout: number | null) => rollout ?? 100

// ---- GrowthBook ----

function growthbookCondition(properties: Property[], now: number): Record<string, unknown> | undefined {
  if (properties.length === 0) return undefined
  const clauses = properties.map((p): Record<string, unknown> => {
    const name = attributeOf(p)
    switch (p.operator ?? 'exact') {
      // phog's exact / is_not compare case-insensitively: GrowthBook's $ini / $nini do too
      case 'exact':
        return { [name]: { $ini: listOf(p.value) } }
      case 'is_not':
        return { [name]: { $nini: listOf(p.value) } }
      case 'icontains':
        return { [name]: { $regexi: escapeRegex(String(p.value)) } }
      case 'regex':
        return { [name]: { $regex: String(p.value) } }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return { [name]: { [`$${p.operator}`]: Number(p.value) } }
      // no relative dates: ISO 8601 strings compare in time order, against the instant computed at setup
      case 'is_date_after':
        return { [name]: { $gt: relativeDate(String(p.value), now).toISOString() } }
      default:
        throw new Error(`no GrowthBook translation for operator ${p.operator}`)
    }
  })
  return clauses.length === 1 ? clauses[0] : { $and: clauses }
}

/** A variant's value on GrowthBook: its key and its payload in one JSON value (a feature has one value). */
function growthbookVariant(key: string, payloads: Record<string, string> | undefined): Record<string, unknown> {
  const payload = payloads?.[key]
  return payload === undefined ? { variant: key } : { variant: key, payload: JSON.parse(payload) }
}

export function growthbookFeatures(flags: PosthogFlag[], now = Date.now()): Record<string, unknown> {
  const features: Record<string, unknown> = {}
  for (const { key, filters } of flags) {
    const hashAttribute = filters.aggregation_group_type_index === undefined ? 'id' : groupType(filters.aggregation_group_type_index)
    const variants = filters.multivariate?.variants
    const rules = filters.groups.map((group) => {
      const condition = growthbookCondition(group.properties, now)
      const coverage = percent(group.rollout_percentage) / 100
      const rule: Record<string, unknown> = { ...(condition ? { condition } : {}), hashAttribute }
      if (variants && !group.variant) {
        // the variant drawn by hash: an experiment rule with the variants' weights
        return {
          ...rule,
          key,
          variations: variants.map((v) => growthbookVariant(v.key, filters.payloads)),
          weights: variants.map((v) => v.rollout_percentage / 100),
          coverage,
        }
      }
      const value = group.variant ? growthbookVariant(group.variant, filters.payloads) : true
      return coverage < 1 ? { ...rule, coverage, force: value } : { ...rule, force: value }
    })
    features[key] = { defaultValue: false, rules }
  }
  return features
}

// ---- Unleash ----

export interface UnleashConstraint {
  contextName: string
  operator: string
  values?: string[]
  value?: string
  caseInsensitive?: boolean
  inverted?: boolean
}
export interface UnleashStrategy {
  name: 'flexibleRollout'
  constraints: UnleashConstraint[]
  parameters: { rollout: string; stickiness: string; groupId: string }
  variants?: { name: string; weight: number; weightType: 'fix' | 'variable'; stickiness: string; payload?: { type: 'json'; value: string } }[]
}
export interface UnleashToggle {
  name: string
  strategies: UnleashStrategy[]
}

function unleashConstraint(p: Property, now: number): UnleashConstraint {
  const contextName = attributeOf(p)
  switch (p.operator ?? 'exact') {
    // IN / NOT_IN compare case-sensitively (the bench's values and properties agree in case)
    case 'exact':
      return { contextName, operator: 'IN', values: listOf(p.value) }
    case 'is_not':
      return { contextName, operator: 'NOT_IN', values: listOf(p.value) }
    case 'icontains':
      return { contextName, operator: 'STR_CONTAINS', values: [String(p.value)], caseInsensitive: true }
    // REGEX: an experimental operator of Unleash 8 (re2 syntax, which the bench's patterns keep to)
    case 'regex':
      return { contextName, operator: 'REGEX', value: String(p.value) }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return { contextName, operator: `NUM_${p.operator!.toUpperCase()}`, value: String(Number(p.value)) }
    // DATE_AFTER compares only the request's time, never a context field: the date is sent as epoch
    // milliseconds (unleashBody) and compared as a number against the instant computed at setup
    case 'is_date_after':
      return { contextName, operator: 'NUM_GT', value: String(relativeDate(String(p.value), now).getTime()) }
    default:
      throw new Error(`no Unleash translation for operator ${p.operator}`)
  }
}

/**
 * Unleash variant weights are out of 1000: all but the last 'fix', the last 'variable' (Unleash wants one, and gives
 * it what the fixed ones leave; were all 'variable', each would get an even share). Payloads as JSON strings.
 */
function unleashVariants(variants: { key: string; percent: number }[], payloads: Record<string, string> | undefined, stickiness: string): UnleashStrategy['variants'] {
  return variants.map((v, i) => ({
    name: v.key,
    weight: Math.round(v.percent * 10),
    weightType: i < variants.length - 1 ? ('fix' as const) : ('variable' as const),
    stickiness,
    ...(payloads?.[v.key] !== undefined ? { payload: { type: 'json' as const, value: payloads[v.key]! } } : {}),
  }))
}

export function unleashToggles(flags: PosthogFlag[], now = Date.now()): UnleashToggle[] {
  return flags.map(({ key, filters }) => {
    const stickiness = filters.aggregation_group_type_index === undefined ? 'userId' : groupType(filters.aggregation_group_type_index)
    const strategies = filters.groups.map((group): UnleashStrategy => {
      const strategy: UnleashStrategy = {
        name: 'flexibleRollout',
        constraints: group.properties.map((p) => unleashConstraint(p, now)),
        parameters: { rollout: String(percent(group.rollout_percentage)), stickiness, groupId: key },
      }
      const multivariate = filters.multivariate?.variants
      if (group.variant) strategy.variants = unleashVariants([{ key: group.variant, percent: 100 }], filters.payloads, stickiness)
      else if (multivariate) strategy.variants = unleashVariants(multivariate.map((v) => ({ key: v.key, percent: v.rollout_percentage })), filters.payloads, stickiness)
      return strategy
    })
    return { name: key, strategies }
  })
}

// ---- the request bodies ----

export interface BenchUser {
  distinctId: string
  person: Record<string, unknown>
  groups: Record<string, string>
  groupProperties: Record<string, Record<string, unknown>>
}

/** The user a phog /decide body (bench/decide.ts decideBodies) carries. */
export function userOf(decideBody: string): BenchUser {
  const body = JSON.parse(decideBody)
  const { distinct_id: _same, ...person } = body.person_properties ?? {}
  return { distinctId: body.distinct_id, person, groups: body.groups ?? {}, groupProperties: body.group_properties ?? {} }
}

/** The group keys and group properties as flat attributes (`company`, `company_seats`). */
function groupAttributes(user: BenchUser): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [type, groupKey] of Object.entries(user.groups)) {
    out[type] = groupKey
    for (const [k, v] of Object.entries(user.groupProperties[type] ?? {})) if (!k.startsWith('$')) out[`${type}_${k}`] = v
  }
  return out
}

/** What GrowthBook's SDK posts for remote evaluation. */
export function growthbookBody(user: BenchUser): string {
  return JSON.stringify({ attributes: { id: user.distinctId, ...user.person, ...groupAttributes(user) }, forcedVariations: {}, forcedFeatures: [], url: '' })
}

/** What an Unleash frontend SDK posts: the context, its custom fields as string properties. */
export function unleashBody(user: BenchUser, dateProperties: string[]): string {
  const properties: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...user.person, ...groupAttributes(user) })) {
    properties[k] = dateProperties.includes(k) ? String(new Date(String(v)).getTime()) : String(v)
  }
  return JSON.stringify({ context: { userId: user.distinctId, properties } })
}

/** Property keys that flags compare as dates (sent to Unleash as epoch milliseconds). */
export function dateProperties(flags: PosthogFlag[]): string[] {
  const keys = flags.flatMap((f) => f.filters.groups.flatMap((g) => g.properties.filter((p) => p.operator?.startsWith('is_date_')).map((p) => p.key)))
  return [...new Set(keys)]
}
