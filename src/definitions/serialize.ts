// Definitions as the REST API renders them (PostHog's enterprise serializers, always: no licence gate), from
// repository rows.
import { isoDate } from '../http/format'
import type { PropertyRow } from './property-repository'
import type { DefinitionRow } from './repository'

export function eventDefinitionJson(d: DefinitionRow) {
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    created_at: isoDate(d.created_at),
    last_seen_at: isoDate(d.last_seen_at),
    last_updated_at: isoDate(d.last_updated_at),
    tags: d.tags,
    verified: d.verified,
    verified_at: isoDate(d.verified_at),
    verified_by: d.verified_by,
    hidden: d.hidden,
    is_action: false,
    action_id: null,
    is_calculating: false,
    last_calculated_at: null,
    created_by: d.created_by,
    post_to_chat: d.post_to_chat,
  }
}

export function propertyDefinitionJson(p: PropertyRow) {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    tags: p.tags,
    is_numerical: p.is_numerical,
    property_type: p.property_type,
    is_seen_on_filtered_events: p.is_seen_on_filtered_events,
    verified: p.verified,
    verified_at: isoDate(p.verified_at),
    verified_by: p.verified_by,
    hidden: p.hidden,
    updated_at: isoDate(p.updated_at),
    updated_by: p.updated_by,
  }
}
