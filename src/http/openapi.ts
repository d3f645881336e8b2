// What the OpenAPI document needs beyond what @elysiajs/openapi generates from the routes' TypeBox schemas.
//
// The plugin writes every schema inline where a route uses it. Here:
// - model('Name', schema) (or a TypeBox `$id: 'Name'`) names a schema: the route keeps validating with this very
//   object, and namedComponents() lists it once under components.schemas, referred to by $ref everywhere (so that
//   a client generator gives it a name);
// - standardAnswers() adds what every operation of a group shares, by path: every /api/ operation requires the
//   personalApiKey or the sessionCookie scheme (signing in and out, neither) and lists 400/401/403/404/429/503
//   with the ErrorBody schema; the public ingestion and flag endpoints list 400/401/413/503; every operation lists
//   404 and 405;
// - documentedBody()/documentedAnswer() describe, in `detail`, the routes that read their body raw (capture, /decide:
//   gzip, lz64, base64 or a form) and so cannot give Elysia a `body` schema.
import { t, type TSchema } from 'elysia'

const MODEL = 'x-model'
const DOCUMENTED_AS = 'x-documented-as'

/** Name a TypeBox schema as a component of the document; the routes keep validating with this very object. */
export function model<T extends TSchema>(name: string, schema: T): T {
  ;(schema as Record<string, unknown>)[MODEL] = name
  return schema
}

export const ErrorBody = model(
  'ErrorBody',
  t.Object(
    {
      type: t.String({ description: 'validation_error, authentication_error, invalid_request, client_error, throttled_error or server_error' }),
      code: t.String({ description: 'machine-readable reason, e.g. invalid_api_key' }),
      detail: t.String({ description: 'human-readable explanation' }),
      attr: t.Union([t.String(), t.Null()], { description: 'the input field at fault (nested: a__b__0), or null' }),
    },
    { description: 'Every error answer of the service' },
  ),
)

type Json = Record<string, unknown>

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid input',
  401: 'Missing or invalid key',
  403: 'Not allowed',
  404: 'Not found',
  405: 'Method not allowed',
  413: 'Request too large',
  429: 'Throttled',
  503: 'A store is unavailable, or the service is draining (retry)',
}

/** Standard error answers and security of a route, by its group. Other slices' routes get them by their path. */
export function routeGroup(path: string): { errors: number[]; security?: Json[] } {
  // signing in and out need no key (and answer no 403/404 of a project)
  if (/^\/api\/log(in|out)\/?$/.test(path)) return { errors: [400, 401, 403, 405, 429, 503] }
  // posthog-js's survey list: the project token in the query, no key
  if (/^\/api\/surveys\/?$/.test(path)) return { errors: [401, 405, 503] }
  if (path.startsWith('/api/')) return { errors: [400, 401, 403, 404, 405, 429, 503], security: [{ personalApiKey: [] }, { sessionCookie: [] }] }
  if (/^\/(_health|_ready|metrics|swagger)/.test(path)) return { errors: [404, 405] }
  return { errors: [400, 401, 404, 405, 413, 429, 503] }
}

/** The fixed parts of the document, given to the plugin as `documentation`. */
export function documentation(info: { title: string; version: string; description: string }, session: { cookie: string; csrfCookie: string; csrfHeader: string }) {
  return {
    info,
    servers: [{ url: '/' }],
    components: {
      responses: {
        Error: { description: 'An error: {type, code, detail, attr}', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } },
      },
      securitySchemes: {
        personalApiKey: {
          type: 'http' as const,
          scheme: 'bearer',
          description: 'A personal API key (phx_…) in Authorization: Bearer; ?personal_api_key= is accepted too',
        },
        sessionCookie: {
          type: 'apiKey' as const,
          in: 'cookie' as const,
          name: session.cookie,
          description: `The console's session (POST /api/login/); a request that changes anything also sends the ${session.csrfHeader} header equal to the ${session.csrfCookie} cookie`,
        },
      },
    },
  }
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Elysia's t.Integer and t.Numeric also accept a numeric string (for query strings and forms); the plugin writes them
 * as anyOf [string, integer|number]. In the document they are what the service answers with: a number.
 */
function elysiaNumber(schema: Json): Json | undefined {
  const union = schema.anyOf
  if (!Array.isArray(union) || union.length !== 2) return undefined
  const [text, number] = union as Json[]
  if (text?.type !== 'string' || (text.format !== 'integer' && text.format !== 'numeric')) return undefined
  if (number?.type !== 'integer' && number?.type !== 'number') return undefined
  const { anyOf: _, ...rest } = schema
  return { ...rest, ...number }
}

/** A schema's component name: given by model(), or a TypeBox `$id` that is a plain name (`{ $id: 'GroupType' }`). */
function modelName(schema: Json): string | undefined {
  if (typeof schema[MODEL] === 'string') return schema[MODEL]
  return typeof schema.$id === 'string' && /^[A-Za-z][A-Za-z0-9_.-]*$/.test(schema.$id) ? schema.$id : undefined
}

/** Every schema marked by model() (or named by its `$id`) goes once into components.schemas; where it stood, a $ref to it. */
export function namedComponents(doc: Json): void {
  const components = (doc.components ??= {}) as Json
  const schemas = (components.schemas ??= {}) as Json
  const hoist = (value: unknown, top = false): unknown => {
    if (Array.isArray(value)) return value.map((v) => hoist(v))
    if (!isObject(value)) return value
    if (isObject(value[DOCUMENTED_AS])) return hoist(value[DOCUMENTED_AS])
    const integer = elysiaNumber(value)
    if (integer) return integer
    const name = modelName(value)
    // the plugin writes "a model or null" as the model's own members with type [type, 'null']: keep the model as it is
    if (typeof name === 'string' && !top && Array.isArray(value.type) && value.type.includes('null')) {
      const types = value.type.filter((type) => type !== 'null')
      return { anyOf: [hoist({ ...value, type: types.length === 1 ? types[0] : types }), { type: 'null' }] }
    }
    if (typeof name === 'string' && !top) {
      if (!(name in schemas)) {
        schemas[name] = {} // placeholder first: a model met again while hoisting refers to itself
        schemas[name] = hoist(value, true)
      }
      return { $ref: `#/components/schemas/${name}` }
    }
    const out: Json = {}
    for (const [k, v] of Object.entries(value)) if (k !== MODEL && !(k === '$id' && name)) out[k] = hoist(v)
    return out
  }
  doc.paths = hoist(doc.paths)
  hoist(ErrorBody)
}

/** Tags, the group's error answers and security on every operation (the plugin knows none of them). */
export function standardAnswers(doc: Json): void {
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const op of Object.values(item) as Json[]) {
      op.tags ??= [path.split('/').filter(Boolean)[0] ?? 'root']
      const responses = (op.responses ??= {}) as Json
      const group = routeGroup(path)
      for (const status of group.errors) responses[String(status)] ??= { $ref: '#/components/responses/Error' }
      for (const [status, answer] of Object.entries(responses)) {
        if (isObject(answer) && !answer.$ref && !answer.description) answer.description = ERROR_TEXT[Number(status)] ?? 'OK'
      }
      if (group.security) op.security = group.security
    }
  }
  const tags = new Set(Object.values((doc.paths ?? {}) as Record<string, Json>).flatMap((item) => Object.values(item).flatMap((op) => (op as Json).tags as string[])))
  doc.tags = [...tags].sort().map((name) => ({ name }))
}

/** detail.requestBody for a route that reads its body raw (capture, /decide): the schema of the decoded JSON. */
export function documentedBody(schema: TSchema, description: string): never {
  return {
    required: true,
    description,
    content: {
      'application/json': { schema },
      'text/plain': { schema: { type: 'string', description: 'gzip, lz64 or base64 of the JSON (posthog-js)' } },
      'application/x-www-form-urlencoded': { schema: t.Object({ data: t.String({ description: 'the JSON, base64 or lz64' }) }) },
    },
  } as never
}

/**
 * A body Elysia takes as it comes (any JSON, or a form) because the service checks it itself, member by member, so
 * that each error names its member in `attr` as PostHog's do; the document shows `schema` for it.
 */
export function documentedAs(schema: TSchema) {
  return t.Unknown({ [DOCUMENTED_AS]: schema })
}

/** detail.requestBody for a JSON body the service checks itself, member by member (so each error names it in `attr`). */
export function checkedBody(schema: TSchema): never {
  return { required: true, content: { 'application/json': { schema } } } as never
}

/** detail.responses for a route that answers without a response schema Elysia checks. */
export function documentedAnswer(schema: TSchema, description = 'OK', status = 200): never {
  return { [status]: { description, content: { 'application/json': { schema } } } } as never
}
