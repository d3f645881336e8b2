// Each side's answer as one shape (flag key → false, true or the variant's key), and the check that a peer's
// answers are right before it is loaded: flags with no rollout must agree user by user, the rest in how many of
// the bench's users have them on (each side hashes users its own way, so the same user may fall either side).
import type { PosthogFlag } from './translate'

export type Flags = Record<string, boolean | string>

export function phogFlags(answer: unknown): Flags {
  const flags = (answer as { featureFlags?: Flags }).featureFlags
  if (!flags || typeof flags !== 'object') throw new Error(`phog: no featureFlags in ${JSON.stringify(answer).slice(0, 200)}`)
  return flags
}

/** GrowthBook answers every feature: its value false, true, or a variant's {variant, payload}. */
export function growthbookFlags(answer: unknown, keys: string[]): Flags {
  const features = (answer as { features?: Record<string, { defaultValue?: unknown }> }).features
  if (!features) throw new Error(`GrowthBook: no features in ${JSON.stringify(answer).slice(0, 200)}`)
  const out: Flags = {}
  for (const key of keys) {
    const value = features[key]?.defaultValue
    if (value === undefined) throw new Error(`GrowthBook: no value for ${key}`)
    out[key] = typeof value === 'object' && value !== null ? String((value as { variant: string }).variant) : value === true
  }
  return out
}

/** Unleash answers the toggles enabled for the context; a variant's name unless it is 'disabled'. */
export function unleashFlags(answer: unknown, keys: string[]): Flags {
  const toggles = (answer as { toggles?: { name: string; enabled: boolean; variant?: { name: string; enabled: boolean } }[] }).toggles
  if (!Array.isArray(toggles)) throw new Error(`Unleash: no toggles in ${JSON.stringify(answer).slice(0, 200)}`)
  const out: Flags = Object.fromEntries(keys.map((k) => [k, false]))
  for (const t of toggles) {
    if (!(t.name in out)) throw new Error(`Unleash: unknown toggle ${t.name}`)
    out[t.name] = t.variant?.enabled ? t.variant.name : t.enabled
  }
  return out
}

const deterministic = (flag: PosthogFlag) => !flag.filters.multivariate && flag.filters.groups.every((g) => (g.rollout_percentage ?? 100) === 100)

/** Throws when a peer's answers to the bench users are not those phog gives (within hashing's spread). */
export function checkAnswers(peer: string, flags: PosthogFlag[], phog: Flags[], theirs: Flags[]): void {
  const users = phog.length
  const problems: string[] = []
  for (const flag of flags) {
    const on = (answers: Flags[]) => answers.filter((a) => a[flag.key] !== false).length
    if (deterministic(flag)) {
      const differing = phog.findIndex((a, i) => a[flag.key] !== theirs[i]![flag.key])
      if (differing >= 0) problems.push(`${flag.key}: user ${differing} is ${theirs[differing]![flag.key]}, phog says ${phog[differing]![flag.key]}`)
    } else if (Math.abs(on(phog) - on(theirs)) > Math.max(8, users / 4)) {
      problems.push(`${flag.key}: on for ${on(theirs)} of ${users} users, phog ${on(phog)}`)
    }
    const variants = new Set(flag.filters.multivariate?.variants.map((v) => v.key) ?? [])
    for (const a of theirs) {
      const v = a[flag.key]
      if (typeof v === 'string' && !variants.has(v)) problems.push(`${flag.key}: unknown variant ${v}`)
      if (variants.size > 0 && v === true) problems.push(`${flag.key}: on without a variant`)
    }
  }
  // the variants' shares over all multivariate flags: the weights must have carried over
  const shares = (answers: Flags[]) => {
    const counts = new Map<string, number>()
    for (const flag of flags.filter((f) => f.filters.multivariate)) for (const a of answers) counts.set(String(a[flag.key]), (counts.get(String(a[flag.key])) ?? 0) + 1)
    return counts
  }
  const [ours, others] = [shares(phog), shares(theirs)]
  for (const variant of new Set([...ours.keys(), ...others.keys()])) {
    const [a, b] = [ours.get(variant) ?? 0, others.get(variant) ?? 0]
    if (Math.abs(a - b) > Math.max(16, 0.3 * Math.max(a, b))) problems.push(`variant ${variant}: ${b} answers, phog ${a}`)
  }
  if (problems.length > 0) throw new Error(`${peer}'s answers differ from phog's:\n  ${[...new Set(problems)].slice(0, 20).join('\n  ')}`)
}
