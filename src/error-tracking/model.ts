// TypeBox schemas of the issues API (PostHog's shapes), for the OpenAPI document.
import { t } from 'elysia'
import { model } from '../http/openapi'
import { pageModel } from '../http/pagination'

const Status = t.Union([t.Literal('active'), t.Literal('resolved'), t.Literal('suppressed')])
const Assignee = t.Union([t.Object({ type: t.Literal('user'), id: t.Integer() }), t.Null()])
const When = t.Union([t.String({ format: 'date-time' }), t.Null()])

export const IssueAggregations = model(
  'ErrorTrackingIssueAggregations',
  t.Object({
    occurrences: t.Integer({ description: '$exception events of the issue in the range' }),
    users: t.Integer({ description: 'distinct persons (personless distinct ids count as one each)' }),
    sessions: t.Integer({ description: 'distinct $session_id' }),
    volumeRange: t.Array(t.Integer(), { description: 'events per UTC day over the range (its last 92 days at most)' }),
    volume_buckets: t.Array(t.Object({ label: t.String({ description: 'YYYY-MM-DD' }), value: t.Integer() })),
  }),
)

export const Issue = model(
  'ErrorTrackingIssue',
  t.Object({
    id: t.String({ format: 'uuid' }),
    name: t.Union([t.String(), t.Null()], { description: "the first exception's type" }),
    description: t.Union([t.String(), t.Null()], { description: "the first exception's message" }),
    status: Status,
    assignee: Assignee,
    first_seen: When,
    last_seen: When,
    created_at: t.String({ format: 'date-time' }),
    aggregations: IssueAggregations,
  }),
)

export const IssuePage = pageModel('ErrorTrackingIssuePage', Issue)

export const IssueDetail = model(
  'ErrorTrackingIssueDetail',
  t.Composite([
    Issue,
    t.Object({
      fingerprints: t.Array(t.String(), { description: "the issue's fingerprints (at most 1,000)" }),
      events: t.Array(
        t.Object({
          uuid: t.String({ format: 'uuid' }),
          distinct_id: t.String(),
          timestamp: t.String({ format: 'date-time' }),
          person_id: t.Union([t.String(), t.Null()]),
          properties: t.Record(t.String(), t.Unknown(), { description: 'as stored: $exception_list (the stack), $exception_fingerprint, $exception_issue_id, …' }),
        }),
        { description: 'the latest events, newest first' },
      ),
    }),
  ]),
)

export const IssueWrite = model(
  'ErrorTrackingIssueWrite',
  t.Object({
    status: t.Optional(Status),
    assignee: t.Optional(Assignee),
    name: t.Optional(t.String({ maxLength: 2048 })),
    description: t.Optional(t.String({ maxLength: 4096 })),
  }),
)

export const IssueRecord = model(
  'ErrorTrackingIssueRecord',
  t.Object({
    id: t.String({ format: 'uuid' }),
    name: t.Union([t.String(), t.Null()]),
    description: t.Union([t.String(), t.Null()]),
    status: Status,
    assignee: Assignee,
    first_seen: When,
    last_seen: When,
    created_at: t.String({ format: 'date-time' }),
  }),
)

export const MergeBody = model('ErrorTrackingMerge', t.Object({ ids: t.Array(t.String({ format: 'uuid' }), { maxItems: 100, description: 'issues merged into this one (then deleted)' }) }))
export const MergeAnswer = model('ErrorTrackingMergeAnswer', t.Object({ success: t.Boolean(), merged: t.Array(t.String()) }))
export const SplitBody = model('ErrorTrackingSplit', t.Object({ fingerprints: t.Array(t.String({ maxLength: 256 }), { maxItems: 100, description: 'each to an issue of its own' }) }))
export const SplitAnswer = model('ErrorTrackingSplitAnswer', t.Object({ success: t.Boolean(), new_issue_ids: t.Array(t.String()) }))
