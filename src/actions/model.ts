// TypeBox schemas of actions: what the routes answer and accept, and what the OpenAPI document shows. The body is
// checked member by member by validation.ts (each refusal names its `attr`), so the write schema only documents it.
import { t } from 'elysia'
import { model } from '../http/openapi'
import { pageModel } from '../http/pagination'

const nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()])
const Matching = (what: string) => nullable(t.Union([t.Literal('contains'), t.Literal('exact'), t.Literal('regex')], { description: `how ${what} is compared (default contains; regex is RE2 syntax)` }))

export const ActionStep = model(
  'ActionStep',
  t.Object({
    event: nullable(t.String({ description: 'the event name (null: any event)' })),
    url: nullable(t.String({ description: "compared with the event's $current_url" })),
    url_matching: Matching('url'),
    properties: t.Array(t.Any(), { description: 'property filters, as in insights ({key, value, operator, type}); all must hold' }),
    text: nullable(t.String({ description: "the clicked element's text ($el_text)" })),
    text_matching: Matching('text'),
    href: nullable(t.String()),
    href_matching: Matching('href'),
    selector: nullable(t.String()),
    tag_name: nullable(t.String()),
  }),
)

export const Action = model(
  'Action',
  t.Object({
    id: t.Integer(),
    name: nullable(t.String()),
    description: t.String(),
    tags: t.Array(t.String()),
    post_to_slack: t.Boolean(),
    slack_message_format: t.String(),
    steps: t.Array(ActionStep),
    created_at: nullable(t.String({ format: 'date-time' })),
    created_by: t.Any({ description: 'the user who created it, or null' }),
    deleted: t.Boolean(),
    is_calculating: t.Boolean(),
    last_calculated_at: nullable(t.String({ format: 'date-time' })),
    pinned_at: nullable(t.String({ format: 'date-time' })),
    team_id: t.Integer(),
    bytecode_error: t.Null(),
  }),
)

export const ActionPage = pageModel('ActionPage', Action)

const StepWrite = t.Object(
  {
    event: t.Optional(nullable(t.String({ maxLength: 400 }))),
    url: t.Optional(nullable(t.String({ maxLength: 2048 }))),
    url_matching: t.Optional(Matching('url')),
    properties: t.Optional(nullable(t.Array(t.Any(), { maxItems: 20 }))),
    text: t.Optional(nullable(t.String({ maxLength: 1000 }))),
    text_matching: t.Optional(Matching('text')),
    href: t.Optional(nullable(t.String({ maxLength: 2048 }))),
    href_matching: t.Optional(Matching('href')),
    selector: t.Optional(nullable(t.String({ maxLength: 1000 }))),
    tag_name: t.Optional(nullable(t.String({ maxLength: 100 }))),
  },
  { description: 'an event matches the step when every part set matches' },
)

export const ActionWrite = model(
  'ActionWrite',
  t.Object({
    name: t.Optional(t.String({ maxLength: 400, description: 'unique among the project’s actions that are not deleted' })),
    description: t.Optional(t.String({ maxLength: 10_000 })),
    tags: t.Optional(t.Array(t.String({ maxLength: 255 }), { maxItems: 100 })),
    post_to_slack: t.Optional(t.Boolean({ description: 'stored; phog sends no Slack messages' })),
    slack_message_format: t.Optional(t.String({ maxLength: 1200 })),
    steps: t.Optional(t.Array(StepWrite, { maxItems: 50, description: 'an event matches the action when it matches any step' })),
    deleted: t.Optional(t.Boolean({ description: 'true deletes it (PATCH)' })),
    pinned_at: t.Optional(nullable(t.String({ format: 'date-time' }))),
  }),
)
