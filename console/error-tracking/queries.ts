// The query API nodes the issue page reads its events with: `$exception` events carry their issue's id
// (`$exception_issue_id`), set at ingestion.

import { hogqlString } from '../lib/hogql'

export const EVENTS_PAGE = 25

function ofIssue(issueId: string) {
  return { kind: 'EventsQuery' as const, event: '$exception', after: 'all', where: [`properties.$exception_issue_id = ${hogqlString(issueId)}`], orderBy: ['timestamp DESC'] }
}

/** A page of the issue's events, newest first: time, distinct id, URL. */
export function eventsNode(issueId: string, offset: number) {
  return { ...ofIssue(issueId), select: ['timestamp', 'distinct_id', 'properties.$current_url'], limit: EVENTS_PAGE, offset }
}

/** What the latest event's stack is read from: posthog-js's exception list, and the older flat properties. */
export const EXCEPTION_PROPERTIES = ['$exception_list', '$exception_type', '$exception_message', '$exception_stack_trace_raw'] as const

/** The issue's latest event: its exception properties, then its time. */
export function latestNode(issueId: string) {
  return { ...ofIssue(issueId), select: [...EXCEPTION_PROPERTIES.map((p) => `properties.${p}`), 'timestamp'], limit: 1 }
}
