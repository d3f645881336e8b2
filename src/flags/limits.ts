// How big one flag may be. PostHog sets no such limits, but here every flag of a project is held compiled in
// memory and evaluated on every /decide of that project: 100,000 conditions (12.5 MB) took seconds to compile
// and a 5 MB payload made every anonymous /decide answer 5 MB. Each limit is far above what real flags use.
import { errors } from '../http/errors'

export const FLAG_LIMITS = {
  /** release conditions (groups), and as many super and holdout conditions */
  conditions: 100,
  /** properties in one condition */
  propertiesPerCondition: 100,
  /** multivariate variants */
  variants: 100,
  /** one payload, as JSON text */
  payloadBytes: 64 * 1024,
  /** the whole filters object, as JSON text */
  filtersBytes: 1024 * 1024,
  /** a flag's name */
  nameCharacters: 4000,
  /** flags in one project (deleted ones excluded) */
  flagsPerProject: 5000,
} as const

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function tooMany(detail: string): never {
  throw errors.validation('limit_exceeded', detail, 'filters')
}

/** The size limits of a flag's filters (checked before anything walks them further). */
export function checkFilterLimits(filters: Record<string, unknown>): void {
  const text = JSON.stringify(filters)
  if (text.length > FLAG_LIMITS.filtersBytes) tooMany(`Filters may be at most ${FLAG_LIMITS.filtersBytes} bytes of JSON.`)
  for (const name of ['groups', 'super_groups', 'holdout_groups'] as const) {
    const groups = filters[name]
    if (!Array.isArray(groups)) continue
    if (groups.length > FLAG_LIMITS.conditions) tooMany(`A flag may have at most ${FLAG_LIMITS.conditions} ${name.replace('_', ' ')} (condition sets).`)
    for (const group of groups) {
      const properties = isObject(group) ? group.properties : undefined
      if (Array.isArray(properties) && properties.length > FLAG_LIMITS.propertiesPerCondition) {
        tooMany(`A condition set may have at most ${FLAG_LIMITS.propertiesPerCondition} properties.`)
      }
    }
  }
  const variants = isObject(filters.multivariate) ? filters.multivariate.variants : undefined
  if (Array.isArray(variants) && variants.length > FLAG_LIMITS.variants) tooMany(`A flag may have at most ${FLAG_LIMITS.variants} variants.`)
  if (isObject(filters.payloads)) {
    for (const payload of Object.values(filters.payloads)) {
      const size = typeof payload === 'string' ? payload.length : (JSON.stringify(payload) ?? '').length
      if (size > FLAG_LIMITS.payloadBytes) tooMany(`A payload may be at most ${FLAG_LIMITS.payloadBytes} bytes of JSON.`)
    }
  }
}
