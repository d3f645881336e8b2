// TypeBox schemas of surveys: what the service accepts (checked member by member in validation.ts, so each error
// names its member), what the routes answer, the public list posthog-js reads and the stats.
import { t } from 'elysia'
import { model } from '../http/openapi'
import { pageModel } from '../http/pagination'

const nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()])
const open = (description: string) => t.Object({}, { additionalProperties: true, description })
const SurveyType = t.Union([t.Literal('popover'), t.Literal('widget'), t.Literal('api'), t.Literal('external_survey')])
const Schedule = t.Union([t.Literal('once'), t.Literal('recurring'), t.Literal('always')])

export const SurveyQuestion = model(
  'SurveyQuestion',
  t.Object(
    {
      id: t.Optional(t.String({ maxLength: 200, description: 'made when absent' })),
      type: t.Union([t.Literal('open'), t.Literal('link'), t.Literal('rating'), t.Literal('single_choice'), t.Literal('multiple_choice')]),
      question: t.String({ description: 'HTML allowed, sanitised' }),
      description: t.Optional(nullable(t.String({ description: 'HTML allowed, sanitised' }))),
      descriptionContentType: t.Optional(t.Union([t.Literal('text'), t.Literal('html')])),
      optional: t.Optional(t.Boolean()),
      buttonText: t.Optional(t.String({ maxLength: 400 })),
      link: t.Optional(t.String({ description: 'link questions: https:// or mailto: only' })),
      scale: t.Optional(t.Union([t.Literal(2), t.Literal(3), t.Literal(5), t.Literal(7), t.Literal(10)])),
      display: t.Optional(t.Union([t.Literal('number'), t.Literal('emoji')])),
      lowerBoundLabel: t.Optional(t.String()),
      upperBoundLabel: t.Optional(t.String()),
      choices: t.Optional(t.Array(t.String(), { description: 'choice questions: at most SURVEY_MAX_CHOICES' })),
      hasOpenChoice: t.Optional(t.Boolean()),
      shuffleOptions: t.Optional(t.Boolean()),
      branching: t.Optional(open('{"type": "next_question" | "end" | "response_based" (responseValues) | "specific_question" (index)}')),
    },
    { additionalProperties: true },
  ),
)

export const SurveyWrite = model(
  'SurveyWrite',
  t.Object({
    name: t.Optional(t.String({ minLength: 1, maxLength: 400, description: 'unique in the project (required to create)' })),
    description: t.Optional(t.String()),
    type: t.Optional(SurveyType),
    schedule: t.Optional(Schedule),
    linked_flag_id: t.Optional(nullable(t.Integer({ description: "a flag of the project; with conditions.linkedFlagVariant, only that variant's visitors" }))),
    questions: t.Optional(t.Array(SurveyQuestion, { description: 'at most SURVEY_MAX_QUESTIONS' })),
    conditions: t.Optional(nullable(open('url, urlMatchType, selector, deviceTypes, deviceTypesMatchType, seenSurveyWaitPeriodInDays, linkedFlagVariant, events, cancelEvents, actions'))),
    appearance: t.Optional(nullable(open("posthog-js's appearance settings (known keys only)"))),
    start_date: t.Optional(nullable(t.String({ format: 'date-time', description: 'set: launched' }))),
    end_date: t.Optional(nullable(t.String({ format: 'date-time', description: 'set: stopped (its targeting flags switched off)' }))),
    archived: t.Optional(t.Boolean()),
    responses_limit: t.Optional(nullable(t.Integer({ minimum: 0 }))),
    iteration_count: t.Optional(nullable(t.Integer({ minimum: 0, maximum: 500 }))),
    iteration_frequency_days: t.Optional(nullable(t.Integer({ minimum: 1, maximum: 3650 }))),
    enable_partial_responses: t.Optional(t.Boolean()),
    targeting_flag_filters: t.Optional(nullable(open("write-only: the targeting flag's filters (made or updated; a full rollout without properties is refused)"))),
    remove_targeting_flag: t.Optional(t.Boolean({ description: 'write-only: delete the targeting flag' })),
  }),
)

const MinimalFlag = nullable(t.Object({ id: t.Integer(), team_id: t.Integer(), key: t.String(), name: t.String(), filters: t.Any(), deleted: t.Boolean(), active: t.Boolean(), ensure_experience_continuity: t.Boolean() }))

export const Survey = model(
  'Survey',
  t.Object(
    {
      id: t.String({ format: 'uuid' }),
      name: t.String(),
      description: t.String(),
      type: SurveyType,
      schedule: Schedule,
      linked_flag: MinimalFlag,
      linked_flag_id: nullable(t.Integer()),
      targeting_flag: MinimalFlag,
      internal_targeting_flag: MinimalFlag,
      questions: t.Array(SurveyQuestion),
      conditions: t.Any(),
      appearance: t.Any(),
      created_at: t.String({ format: 'date-time' }),
      start_date: nullable(t.String({ format: 'date-time' })),
      end_date: nullable(t.String({ format: 'date-time' })),
      archived: t.Boolean(),
      feature_flag_keys: t.Array(t.Object({ key: t.String(), value: nullable(t.String()) })),
      current_iteration: nullable(t.Integer()),
      iteration_start_dates: nullable(t.Array(t.String())),
      enable_partial_responses: t.Boolean(),
    },
    { additionalProperties: true },
  ),
)

export const SurveyPage = pageModel('SurveyPage', Survey)

export const PublicSurveys = model(
  'PublicSurveys',
  t.Object({
    surveys: t.Array(t.Object({ id: t.String(), name: t.String(), type: SurveyType, linked_flag_key: nullable(t.String()), targeting_flag_key: nullable(t.String()), internal_targeting_flag_key: nullable(t.String()) }, { additionalProperties: true })),
    survey_config: t.Any(),
  }),
)

const EventStats = t.Object({ total_count: t.Integer(), unique_persons: t.Integer(), first_seen: nullable(t.String()), last_seen: nullable(t.String()) }, { additionalProperties: true })

export const SurveyStats = model(
  'SurveyStats',
  t.Object({
    stats: t.Object({ 'survey shown': EventStats, 'survey dismissed': EventStats, 'survey sent': EventStats }),
    rates: t.Object({ response_rate: t.Number(), dismissal_rate: t.Number(), unique_users_response_rate: t.Number(), unique_users_dismissal_rate: t.Number() }),
    survey_id: t.Optional(t.String()),
    start_date: t.Optional(nullable(t.String())),
    end_date: t.Optional(nullable(t.String())),
  }),
)
