// PostHog's breakdown sentinels: values past the limit are summed as "other", a missing value is "null".
export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$'
export const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$'
export const DEFAULT_BREAKDOWN_LIMIT = 25

/** The values kept, largest total first (ties by value), and whether the rest make an "other". */
export function keptValues(totals: ReadonlyMap<string, number>, limit: number, hideOther: boolean): { kept: string[]; other: boolean } {
  const ranked = [...totals].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([v]) => v)
  return { kept: ranked.slice(0, limit), other: ranked.length > limit && !hideOther }
}
