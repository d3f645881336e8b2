// A query node checked against its kind's schema before anything else reads it: the first problem is answered as a
// 400 naming the member (`attr` as the API's other validation errors write it: query__series__0__math).
import type { TSchema } from 'elysia'
import { Value } from '@sinclair/typebox/value'
import { errors } from '../http/errors'

export function checkNode<T>(schema: TSchema, node: unknown, at = 'query'): T {
  if (Value.Check(schema, node)) return node as T
  const first = Value.Errors(schema, node).First()
  const path = first?.path ? first.path.replace(/^\//, '').split('/').filter((p) => p !== '') : []
  const attr = [at, ...path].join('__')
  const unknown = first && first.message.includes('Unexpected property')
  const detail = unknown ? `Unknown field "${path[path.length - 1] ?? ''}"` : `${path.join('.') || at}: ${first?.message ?? 'invalid'}`
  throw errors.validation('invalid_input', detail, attr)
}
