// The group types API's schemas (PostHog's GroupTypeSerializer, the fields this service keeps).
import { t } from 'elysia'

const name = (description: string) => t.Union([t.String({ maxLength: 400 }), t.Null()], { description })

export const GroupType = t.Object(
  {
    group_type: t.String({ description: 'the type as events name it ($groups keys, $group_type)' }),
    group_type_index: t.Integer({ minimum: 0, maximum: 4 }),
    name_singular: name('display name, e.g. "company"'),
    name_plural: name('display name, e.g. "companies"'),
    created_at: t.String({ format: 'date-time' }),
  },
  { $id: 'GroupType' },
)

export const GroupTypeList = t.Array(GroupType, { $id: 'GroupTypeList' })

export const GroupTypeNames = t.Object(
  {
    name_singular: t.Optional(name('display name, e.g. "company"')),
    name_plural: t.Optional(name('display name, e.g. "companies"')),
  },
  { $id: 'GroupTypeNames', additionalProperties: false },
)

/** PostHog's update_metadata: several types' names at once, each named by its index. */
export const GroupTypeNamesBulk = t.Array(
  t.Object({
    group_type_index: t.Integer({ minimum: 0, maximum: 4 }),
    name_singular: t.Optional(name('display name')),
    name_plural: t.Optional(name('display name')),
  }),
  { $id: 'GroupTypeNamesBulk', maxItems: 5 },
)

export const GroupTypeDeleted = t.Object(
  {
    group_type: t.String(),
    group_type_index: t.Integer(),
    groups_deleted: t.Integer(),
    property_definitions_deleted: t.Integer(),
    blocked: t.Literal(true, { description: 'always true: events naming this type take no slot until it is unblocked' }),
  },
  { $id: 'GroupTypeDeleted' },
)

export const BlockedGroupTypeList = t.Array(
  t.Object({ group_type: t.String(), blocked_at: t.String({ format: 'date-time' }) }),
  { $id: 'BlockedGroupTypeList', description: 'deleted group types, newest first (at most 1,000 are kept)' },
)

export const GroupTypeUnblock = t.Object(
  { group_type: t.String({ minLength: 1, maxLength: 400, description: 'the name events use, as listed in blocked/' }) },
  { $id: 'GroupTypeUnblock', additionalProperties: false },
)

export const GroupTypeUnblocked = t.Object({ group_type: t.String(), blocked: t.Literal(false) }, { $id: 'GroupTypeUnblocked' })
