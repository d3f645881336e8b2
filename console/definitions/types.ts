export type DefinitionKind = 'event' | 'property'

export interface Definition {
  id: string
  name: string
  description: string
  tags: string[]
  verified: boolean
  hidden: boolean
  property_type?: string | null
  last_seen_at?: string | null
  created_at?: string | null
  verified_by?: { email: string } | null
}

export const KINDS = {
  event: { title: 'Event definitions', api: 'event_definitions', path: '/event-definitions', one: 'Event' },
  property: { title: 'Property definitions', api: 'property_definitions', path: '/property-definitions', one: 'Property' },
} as const

export const PROPERTY_TYPES = ['String', 'Numeric', 'Boolean', 'DateTime', 'Duration']
