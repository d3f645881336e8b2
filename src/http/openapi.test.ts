// What src/http/openapi.ts adds to the plugin's document, on a small document of the plugin's shape.
import { describe, expect, test } from 'bun:test'
import { t } from 'elysia'
import { documentedAs, model, namedComponents, standardAnswers } from './openapi'

describe('the document, completed', () => {
  test('models become components once, referred to by $ref; "a model or null" leaves the model as it is', () => {
    const User = model('UserForTest', t.Object({ id: t.Integer(), name: t.String() }))
    const Page = model('PageForTest', t.Object({ count: t.Integer(), results: t.Array(User) }))
    const Write = t.Object({ name: t.String() }, { $id: 'WriteForTest' })
    // as the plugin writes them: schemas inline; a nullable model merged into one object with type [type, 'null'];
    // Elysia's integer as a string-or-integer union
    const json = (value: unknown) => JSON.parse(JSON.stringify(value))
    const doc: Record<string, any> = {
      paths: {
        '/api/things/': {
          get: { responses: { 200: { content: { 'application/json': { schema: json(Page) } } } } },
          post: {
            requestBody: { content: { 'application/json': { schema: json(documentedAs(Write)) } } },
            responses: { 201: { content: { 'application/json': { schema: { ...json(User), type: ['object', 'null'] } } } } },
          },
        },
        '/capture': { post: { responses: { 200: { description: 'OK' } } } },
      },
    }
    namedComponents(doc)
    standardAnswers(doc)
    const things = doc.paths['/api/things/']
    expect(things.get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PageForTest' })
    expect(things.post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WriteForTest' })
    expect(things.post.responses['201'].content['application/json'].schema).toEqual({ anyOf: [{ $ref: '#/components/schemas/UserForTest' }, { type: 'null' }] })
    const schemas = doc.components.schemas
    expect(schemas.UserForTest.type).toBe('object')
    expect(schemas.UserForTest.properties.id).toEqual({ type: 'integer' })
    expect(schemas.PageForTest.properties.results.items).toEqual({ $ref: '#/components/schemas/UserForTest' })
    expect(schemas.WriteForTest.$id).toBeUndefined()
    expect(schemas.ErrorBody.required).toEqual(['type', 'code', 'detail', 'attr'])
    expect(JSON.stringify(doc)).not.toContain('x-model')
    // the group's errors and security, by path
    expect(things.get.security).toEqual([{ personalApiKey: [] }, { sessionCookie: [] }])
    for (const status of ['400', '401', '403', '404', '405', '429', '503']) expect(things.get.responses[status]).toEqual({ $ref: '#/components/responses/Error' })
    expect(doc.paths['/capture'].post.security).toBeUndefined()
    expect(Object.keys(doc.paths['/capture'].post.responses).sort()).toEqual(['200', '400', '401', '404', '405', '413', '429', '503'])
    expect(doc.tags.map((tag: { name: string }) => tag.name)).toEqual(['api', 'capture'])
  })
})
