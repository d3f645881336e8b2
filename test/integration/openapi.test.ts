// The OpenAPI document is the contract: valid OpenAPI 3.1 (checked by @apidevtools/swagger-parser), every route the
// app registers is in it, with request bodies, 2xx content schemas, the error schema and personal-key security.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { isDocumentable } from '../../src/http/openapi'
import { PersonalApiKey } from '../../src/projects/model'
import { BASE, json, startStack, type Stack } from '../helpers/stack'

type Json = Record<string, any>

describe('OpenAPI document', () => {
  let stack: Stack
  let doc: Json
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' })
    const r = await stack.app.handle(new Request(`${BASE}/swagger/json`))
    expect(r.status).toBe(200)
    doc = await json(r)
  })
  afterAll(() => stack?.close())

  const operations = () =>
    Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]) => ({ path, method, op: op as Json })),
    )

  test('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0')
    await SwaggerParser.validate(structuredClone(doc) as never)
    // and the validator does refuse a broken document
    const broken = structuredClone(doc)
    broken.paths['/broken'] = { get: { responses: { 200: { content: 'not an object' } } } }
    expect(await SwaggerParser.validate(broken as never).then(() => 'accepted', () => 'refused')).toBe('refused')
  })

  test('covers every route the app registers', () => {
    const missing: string[] = []
    const routes = (stack.app.routes as { method: string; path: string }[]).filter(isDocumentable)
    for (const route of routes) {
      const path = route.path.replace(/:(\w+)/g, '{$1}')
      if (!doc.paths[path]?.[route.method.toLowerCase()]) missing.push(`${route.method} ${route.path}`)
    }
    expect(missing).toEqual([])
    expect(operations().length).toBe(routes.length)
    expect(routes.length).toBeGreaterThan(50)
  })

  test('every operation has a 2xx with a content schema (OPTIONS and empty answers aside) and lists its 4xx with ErrorBody', () => {
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`
      const ok = Object.entries(op.responses as Json).filter(([s]) => s.startsWith('2'))
      expect(ok.length, where).toBeGreaterThan(0)
      for (const [status, r] of ok) {
        // 204, and PostHog's empty 202 (a person's erasure)
        if (method === 'options' || status === '204' || (status === '202' && !(r as Json).content)) continue
        const content = (r as Json).content as Json
        expect(content, where).toBeDefined()
        for (const media of Object.values(content)) expect((media as Json).schema, where).toBeDefined()
      }
      const fourxx = Object.entries(op.responses as Json).filter(([s]) => s.startsWith('4'))
      expect(fourxx.length, where).toBeGreaterThan(0)
      for (const [, r] of fourxx) expect((r as Json).$ref, where).toBe('#/components/responses/Error')
      if (path.startsWith('/api/')) expect(op.security, where).toEqual([{ personalApiKey: [] }])
    }
    expect(doc.components.responses.Error.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorBody' })
    expect(doc.components.schemas.ErrorBody.required).toEqual(['type', 'code', 'detail', 'attr'])
  })

  test('capture, batch, decide, flags and the writes have request bodies', () => {
    for (const [path, method] of [
      ['/capture', 'post'],
      ['/batch', 'post'],
      ['/e', 'post'],
      ['/decide', 'post'],
      ['/flags', 'post'],
      ['/api/personal_api_keys/', 'post'],
      ['/api/projects/{project_id}/feature_flags/', 'post'],
      ['/api/projects/{project_id}/feature_flags/{id}/', 'patch'],
      ['/api/projects/{project_id}/event_definitions/{id}/', 'patch'],
    ]) {
      const body = doc.paths[path]?.[method]?.requestBody
      expect(body?.content?.['application/json']?.schema, `${method} ${path}`).toBeDefined()
    }
    expect(doc.paths['/capture'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CaptureBody' })
  })

  test('components.schemas holds the models the routes validate with', () => {
    for (const name of ['ErrorBody', 'Project', 'ProjectPage', 'PersonalApiKey', 'PersonalApiKeyCreate', 'CaptureBody', 'CaptureEvent', 'DecideBody']) {
      expect(doc.components.schemas[name], name).toBeDefined()
    }
    // the very schema object the route validates with is the one the document names
    const route = (stack.app.routes as { method: string; path: string; hooks: Json }[]).find(
      (r) => r.method === 'POST' && r.path === '/api/personal_api_keys/',
    )!
    expect(route.hooks.response[201]).toBe(PersonalApiKey)
    expect(doc.paths['/api/personal_api_keys/'].post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/PersonalApiKey',
    })
    expect(doc.components.schemas.PersonalApiKey.properties.mask_value.type).toBe('string')
    const generic = operations().filter(({ op }) => JSON.stringify(op.responses).includes('#/components/schemas/JsonValue'))
    console.log(
      `OpenAPI: ${operations().length} operations on ${Object.keys(doc.paths).length} paths, ${Object.keys(doc.components.schemas).length} schemas; ${generic.length} operations answer the generic JsonValue: ${generic.map((g) => `${g.method.toUpperCase()} ${g.path}`).join(', ')}`,
    )
  })
})
