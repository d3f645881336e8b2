// Definitions as the REST API renders them (PostHog's serializers), from repository rows.
import { isoDate } from '../http/format'
import type { DefinitionRow } from './repository'

export function eventDefinitionJson(d: DefinitionRow) {
  return {
    id: d.id,
    name: d.name,
    created_at: isoDate(d.created_at),
    last_seen_at: isoDate(d.last_seen_at),
    last_updated_at: isoDate(d.last_updated_at),
    tags: d.tags,
    is_action: false,
    action_id: null,
    is_calculating: false,
    last_calculated_at: null,
    created_by: d.created_by,
    post_to_chat: d.post_to_chat,
  }
}
