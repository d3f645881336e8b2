// Group analytics in insights. Events do not carry PostHog's `$group_0…4` columns here: capture keeps what the client
// sent, and posthog-js and posthog-node send an event's groups as `properties.$groups` ({type name: key}). A group
// type's index is the project's own (group_type_mappings, allocated by the learner in order of first sight), so the
// key of group type N on an event is `properties.$groups[<the name of type N>]`, the name read from Postgres once per
// query. An event without that type (or with an empty key) belongs to no group of it.
import { str, unsupported } from './hogql'
import type { InsightContext } from './service'

/** A group type index of a query member: 0 to 4, refused by `attr` otherwise. */
export function groupIndexOf(value: unknown, attr: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 4) return value
  return unsupported('A group type index is a whole number from 0 to 4', attr)
}

/** The HogQL of an event's key of the group type at `index` (as text; NULL when the event has none), and its condition. */
export async function groupKeyOf(ctx: InsightContext, index: number, attr: string): Promise<{ key: string; present: string }> {
  const name = await ctx.groupTypeName(index, attr)
  const key = `toString(properties['$groups'][${str(name)}])`
  return { key, present: `${key} IS NOT NULL AND ${key} != ''` }
}
