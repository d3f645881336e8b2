// A query node checked against its kind's schema before anything else reads it: the first problem is answered as a
// 400 naming the member (`attr` as the API's other validation errors write it: query__series__0__math).
import type { TSchema } from 'elysia'
import { Value } from '@sinclair/typebox/value'
import { errors } from '../http/errors'

/** The member of a union of nodes (EventsNode | ActionsNode) whose `kind` the value names, if any. */
function memberOfKind(schema: TSchema, value: unknown): TSchema | undefined {
  const kind = value !== null && typeof value === 'object' ? (value as { kind?: unknown }).kind : undefined
  if (typeof kind !== 'string' || !Array.isArray(schema.anyOf)) return undefined
  return (schema.anyOf as TSchema[]).find((member) => member.properties?.kind?.const === kind)
}

export function checkNode<T>(schema: TSchema, node: unknown, at = 'query'): T {
  if (Value.Check(schema, node)) return node as T
  const first = Value.Errors(schema, node).First()
  const path = first?.path ? first.path.replace(/^\//, '').split('/').filter((p) => p !== '') : []
  const attr = [at, ...path].join('__')
  // a union of nodes fails as a whole: the member its `kind` names says which of its fields is wrong
  const member = first ? memberOfKind(first.schema, first.value) : undefined
  if (member) checkNode(member, first!.value, attr)
  const unknown = first && first.message.includes('Unexpected property')
  const detail = unknown ? `Unknown field "${path[path.length - 1] ?? ''}"` : `${path.join('.') || at}: ${first?.message ?? 'invalid'}`
  throw errors.validation('invalid_input', detail, attr)
}
