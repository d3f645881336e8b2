// The web analytics query nodes: PostHog's WebOverviewQuery and WebStatsTableQuery, as its app sends them.
import { t } from 'elysia'
import { CompareFilter, DateRange, Properties } from './model'


/** Members PostHog's app sends that change nothing here (accepted, ignored). */
const Ignored = {
  filterTestAccounts: t.Optional(t.Union([t.Boolean(), t.Null()])),
  sampling: t.Optional(t.Any()),
  samplingFactor: t.Optional(t.Any()),
  modifiers: t.Optional(t.Any()),
  response: t.Optional(t.Any()),
  useSessionsTable: t.Optional(t.Any()),
  doPathCleaning: t.Optional(t.Union([t.Boolean(), t.Null()])),
  tags: t.Optional(t.Any()),
  version: t.Optional(t.Any()),
}

export const WebOverviewQuery = t.Object(
  {
    kind: t.Literal('WebOverviewQuery'),
    dateRange: t.Optional(t.Union([DateRange, t.Null()])),
    properties: t.Optional(Properties),
    compareFilter: CompareFilter,
    conversionGoal: t.Optional(t.Null()),
    includeRevenue: t.Optional(t.Union([t.Literal(false), t.Null()])),
    ...Ignored,
  },
  { additionalProperties: false },
)

/**
 * The breakdowns served, and the event property each reads: a session's (`initial`: its first event's; `last`: its
 * last event's that carries the property, as PostHog's session end URL) or each pageview's.
 */
export const WEB_BREAKDOWNS = {
  Page: { property: '$pathname', initial: false },
  InitialPage: { property: '$pathname', initial: true },
  ExitPage: { property: '$pathname', initial: true, last: true },
  InitialReferringDomain: { property: '$referring_domain', initial: true },
  InitialUTMSource: { property: 'utm_source', initial: true },
  InitialUTMCampaign: { property: 'utm_campaign', initial: true },
  InitialUTMMedium: { property: 'utm_medium', initial: true },
  InitialUTMTerm: { property: 'utm_term', initial: true },
  InitialUTMContent: { property: 'utm_content', initial: true },
  Browser: { property: '$browser', initial: true },
  OS: { property: '$os', initial: true },
  DeviceType: { property: '$device_type', initial: true },
  Country: { property: '$geoip_country_code', initial: true },
  Region: { property: '$geoip_subdivision_1_code', initial: true },
  City: { property: '$geoip_city_name', initial: true },
  Language: { property: '$browser_language', initial: true },
  ScreenName: { property: '$screen_name', initial: false },
} as const satisfies Record<string, { property: string; initial: boolean; last?: boolean }>

export type WebBreakdown = keyof typeof WEB_BREAKDOWNS

export const WebStatsTableQuery = t.Object(
  {
    kind: t.Literal('WebStatsTableQuery'),
    breakdownBy: t.Union(Object.keys(WEB_BREAKDOWNS).map((k) => t.Literal(k))),
    dateRange: t.Optional(t.Union([DateRange, t.Null()])),
    properties: t.Optional(Properties),
    compareFilter: CompareFilter,
    includeBounceRate: t.Optional(t.Union([t.Boolean(), t.Null()])),
    includeScrollDepth: t.Optional(t.Union([t.Literal(false), t.Null()])),
    conversionGoal: t.Optional(t.Null()),
    orderBy: t.Optional(t.Union([t.Array(t.String({ maxLength: 32 }), { maxItems: 2 }), t.Null()])),
    limit: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 1000 }), t.Null()])),
    offset: t.Optional(t.Union([t.Integer({ minimum: 0, maximum: 100_000 }), t.Null()])),
    ...Ignored,
  },
  { additionalProperties: false },
)
