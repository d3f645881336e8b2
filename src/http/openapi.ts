// The OpenAPI 3.1 document, built from the app's registered routes and the TypeBox schemas they validate with.
//
// How a route gets documented (nothing to do beyond giving it TypeBox schemas and a `detail`):
// - path, method, `params` and `query` schemas → parameters; a `body` schema (or `detail.requestBody` for routes
//   that read raw bodies, such as capture) → requestBody; `response` schemas → 2xx answers with content.
// - A schema wrapped in model('Name', …) is listed once under components.schemas and referred to by $ref.
// - Standard answers and security come from the route's group, by path: every /api/ operation requires the
//   personalApiKey scheme and lists 400/401/403/404/429/503 with the ErrorBody schema; public ingestion and flag
//   endpoints list 400/401/413/503; every operation lists 404 and 405.
// - A route with no declared 2xx schema is documented with the generic JsonValue schema (listed in the report of
//   the docs test), so that no operation is left out.
import { t, type TSchema } from 'elysia'

const MODEL = 'x-model'

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

export const JsonValue = model('JsonValue', t.Any({ description: 'a JSON answer without a published schema' }))

interface RouteLike {
  method: string
  path: string
  hooks?: {
    body?: unknown
    query?: unknown
    params?: unknown
    response?: unknown
    detail?: Record<string, unknown>
  }
}

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
  if (path.startsWith('/api/')) return { errors: [400, 401, 403, 404, 405, 429, 503], security: [{ personalApiKey: [] }] }
  if (/^\/(_health|_ready|metrics|swagger)/.test(path)) return { errors: [404, 405] }
  return { errors: [400, 401, 404, 405, 413, 503] }
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head']

/** Catch-alls (method ALL, or a path with *, e.g. for 404/405 answers) are plumbing, not operations. */
export function isDocumentable(route: { method: string; path: string }): boolean {
  return METHODS.includes(route.method.toLowerCase()) && !route.path.includes('*')
}

export function buildOpenApi(routes: RouteLike[], info: Json): Json {
  const schemas: Json = {}
  const convert = (schema: unknown, top = false): unknown => {
    if (Array.isArray(schema)) return schema.map((s) => convert(s))
    if (!isObject(schema)) return schema
    const name = schema[MODEL]
    if (typeof name === 'string' && !top) {
      if (!(name in schemas)) {
        schemas[name] = {} // placeholder first: a model met again while converting refers to itself
        schemas[name] = convert(schema, true)
      }
      return { $ref: `#/components/schemas/${name}` }
    }
    const out: Json = {}
    for (const [k, v] of Object.entries(schema)) {
      if (k === MODEL) continue
      out[k] = convert(v)
    }
    return out
  }
  const errorRef = () => ({ $ref: '#/components/responses/Error' })

  const paths: Record<string, Json> = {}
  for (const route of routes) {
    const method = route.method.toLowerCase()
    if (!isDocumentable(route)) continue
    const path = route.path.replace(/:(\w+)/g, '{$1}')
    const hooks = route.hooks ?? {}
    const detail = { ...(hooks.detail ?? {}) }
    const op: Json = {
      operationId: `${method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      tags: (detail.tags as string[] | undefined) ?? [route.path.split('/').filter(Boolean)[0] ?? 'root'],
    }
    if (detail.summary) op.summary = detail.summary
    if (detail.description) op.description = detail.description

    const parameters: Json[] = []
    const pathNames = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1])
    const params = isObject(hooks.params) ? (hooks.params.properties as Json | undefined) ?? {} : {}
    for (const name of pathNames) {
      parameters.push({ name, in: 'path', required: true, schema: convert(params[name] ?? { type: 'string' }) })
    }
    if (isObject(hooks.query) && isObject(hooks.query.properties)) {
      const required = new Set((hooks.query.required as string[] | undefined) ?? [])
      for (const [name, schema] of Object.entries(hooks.query.properties)) {
        const p: Json = { name, in: 'query', required: required.has(name), schema: convert(schema) }
        if (isObject(schema) && typeof schema.description === 'string') p.description = schema.description
        parameters.push(p)
      }
    }
    if (parameters.length) op.parameters = parameters

    if (hooks.body !== undefined && hooks.body !== null && method !== 'get') {
      op.requestBody = { required: true, content: { 'application/json': { schema: convert(hooks.body) } } }
    } else if (isObject(detail.requestBody)) {
      op.requestBody = convert(detail.requestBody)
    }

    const responses: Json = {}
    const declared = hooks.response
    const byStatus: Record<string, unknown> = isObject(declared) && !('type' in declared) && !('anyOf' in declared) && !(MODEL in declared)
      ? declared
      : declared !== undefined
        ? { 200: declared }
        : {}
    for (const [status, schema] of Object.entries(byStatus)) {
      responses[status] = { description: ERROR_TEXT[Number(status)] ?? 'OK', content: { 'application/json': { schema: convert(schema) } } }
    }
    if (isObject(detail.responses)) {
      for (const [status, r] of Object.entries(detail.responses)) responses[status] ??= convert(r)
    }
    const has2xx = Object.keys(responses).some((s) => s.startsWith('2'))
    if (!has2xx) {
      responses[method === 'options' ? '204' : '200'] =
        method === 'options'
          ? { description: 'CORS preflight answer (headers only)' }
          : { description: 'OK', content: { 'application/json': { schema: convert(JsonValue) } } }
    }
    const group = routeGroup(route.path)
    for (const status of group.errors) responses[String(status)] ??= errorRef()
    op.responses = responses
    if (group.security) op.security = group.security

    paths[path] ??= {}
    paths[path][method] = op
  }

  convert(ErrorBody)
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    tags: [...new Set(Object.values(paths).flatMap((p) => Object.values(p).flatMap((o) => (o as Json).tags as string[])))].sort().map((name) => ({ name })),
    paths,
    components: {
      schemas,
      responses: {
        Error: { description: 'An error: {type, code, detail, attr}', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } },
      },
      securitySchemes: {
        personalApiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'A personal API key (phx_…) in Authorization: Bearer; ?personal_api_key= is accepted too',
        },
      },
    },
  }
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

/** detail.responses for a route that answers without a response schema Elysia checks. */
export function documentedAnswer(schema: TSchema, description = 'OK'): never {
  return { 200: { description, content: { 'application/json': { schema } } } } as never
}
