import { describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { buildOpenApi, isDocumentable, model } from './openapi'

describe('buildOpenApi', () => {
  test('a newly registered /api/ route is documented with its models, error answers and security, with no extra work', () => {
    const Cohort = model('CohortForTest', t.Object({ id: t.Integer(), name: t.String() }))
    const CohortWrite = model('CohortWriteForTest', t.Object({ name: t.String({ maxLength: 400 }) }))
    const app = new Elysia()
      .post('/api/projects/:project_id/cohorts/', () => ({ id: 1, name: 'x' }), {
        params: t.Object({ project_id: t.String() }),
        query: t.Object({ limit: t.Optional(t.Integer({ description: 'page size' })) }),
        body: CohortWrite,
        response: { 201: Cohort },
        detail: { tags: ['cohorts'], summary: 'Create a cohort' },
      })
      .get('/_health', () => ({ status: 'ok' }))
      .all('/*', () => 'catch-all')
    const doc = buildOpenApi(app.routes as never, { title: 't', version: '1' }) as any
    const op = doc.paths['/api/projects/{project_id}/cohorts/'].post
    expect(op.security).toEqual([{ personalApiKey: [] }])
    expect(op.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CohortWriteForTest' })
    expect(op.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CohortForTest' })
    for (const status of ['400', '401', '403', '404', '429', '503']) expect(op.responses[status]).toEqual({ $ref: '#/components/responses/Error' })
    expect(op.parameters).toMatchObject([
      { name: 'project_id', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'limit', in: 'query', required: false, description: 'page size' },
    ])
    expect(doc.components.schemas.CohortForTest.properties.name).toEqual({ type: 'string' })
    expect(doc.components.schemas.CohortForTest['x-model']).toBeUndefined()
    // a route without an answer schema still has a 2xx with content; plumbing catch-alls are left out
    expect(doc.paths['/_health'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/JsonValue' })
    expect(doc.paths['/_health'].get.security).toBeUndefined()
    expect(doc.paths['/*']).toBeUndefined()
    expect(isDocumentable({ method: 'ALL', path: '/x' })).toBe(false)
  })
})
