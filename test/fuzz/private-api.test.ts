// SQL metacharacters in search, ordering and ids, and tricks in headers and paths, on the private API:
// never a 500, never another project's data, and the tables are still there afterwards.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { recordSightings } from '../../src/definitions/repository'
import { createProject } from '../../src/projects/repository'
import { BASE, PERSONAL_KEY, startStack, type Stack } from '../helpers/stack'
import { fuzzParams } from './settings'

const RUNS = fuzzParams(100, 1000)

const SQLISH = [
  "'", '"', ';', '--', '/*', '*/', "' OR '1'='1", "'; DROP TABLE event_definitions; --", '\\', '%', '_', '\0', '$1', '::text',
  ') or (1=1', 'name collate "C"; delete from projects', '\uD800', "\\'", 'union select * from personal_api_keys',
]

let stack: Stack
let otherProject: number
beforeAll(async () => {
  stack = await startStack({ postgres: 'real', clickhouse: 'embedded' })
  const sql = stack.services.db.sql
  const [org] = await sql`insert into organizations (name) values ('Victim') returning id`
  otherProject = (await createProject(sql, { name: 'Victim project', organizationId: org.id })).id
  await recordSightings(sql, [
    { teamId: 1, name: 'ours', seenAt: Date.now() },
    { teamId: otherProject, name: 'victim secret', seenAt: Date.now() },
  ])
})
afterAll(() => stack?.close())

const problems: string[] = []
async function check(path: string, init: RequestInit = {}) {
  const r = await stack.app.handle(new Request(`${BASE}${path}`, { ...init, headers: { authorization: `Bearer ${PERSONAL_KEY}`, ...(init.headers as Record<string, string>) } }))
  const text = await r.text()
  if (r.status >= 500) problems.push(`${path} → ${r.status} ${text.slice(0, 160)}`)
  if (text.includes('victim secret') || text.includes('Victim project')) problems.push(`${path} leaked another project's data`)
  return r.status
}

/** Percent-encode the UTF-8 bytes (encodeURIComponent throws on lone surrogates; a raw client does not care). */
function percentEncode(value: string): string {
  return [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')
}

const nasty = fc.oneof(fc.constantFrom(...SQLISH), fc.string({ unit: 'binary', maxLength: 40 }), fc.array(fc.constantFrom(...SQLISH), { maxLength: 4 }).map((a) => a.join(' ')))

describe('injection on the private API', () => {
  test('search, ordering, event_type, paging and ids with SQL metacharacters', async () => {
    await fc.assert(
      fc.asyncProperty(nasty, nasty, nasty, async (a, b, c) => {
        const q = percentEncode
        await check(`/api/projects/1/event_definitions/?search=${q(a)}&ordering=${q(b)}&event_type=${q(c)}`)
        await check(`/api/projects/1/event_definitions/?limit=${q(a)}&offset=${q(b)}`)
        await check(`/api/projects/1/event_definitions/${q(a)}/`)
        await check(`/api/projects/1/event_definitions/${q(a)}/`, { method: 'PATCH', body: JSON.stringify({ tags: [b], name: c || 'x' }), headers: { 'content-type': 'application/json' } })
        await check(`/api/projects/1/event_definitions/${q(a)}/`, { method: 'DELETE' })
        await check(`/api/projects/${q(a)}/event_definitions/`)
        await check(`/api/projects/1/persons/?distinct_id=${q(a)}`)
        await check(`/api/projects/1/events/?event=${q(a)}&distinct_id=${q(b)}&after=${q(c)}`)
        await check(`/api/projects/1/events/?cursor=${q(a)}`)
      }),
      RUNS,
    )
    expect(problems).toEqual([])
    const [{ n }] = await stack.services.db.sql`select count(*)::int as n from event_definitions`
    expect(n).toBe(2)
  })

  test('header and path tricks', async () => {
    const headers = [
      'Bearer', 'Bearer ', 'bearer ' + PERSONAL_KEY, `Bearer ${PERSONAL_KEY} extra`, `Basic ${btoa('a:b')}`, `Bearer ${'x'.repeat(10_000)}`,
      'Bearer phc_test_project_key_0001', `Bearer\t${PERSONAL_KEY}`, `Bearer ${PERSONAL_KEY}, Bearer phx_other`,
    ]
    for (const h of headers) {
      const status = await check('/api/projects/1/event_definitions/', { headers: { authorization: h } })
      expect(status).toBeOneOf([200, 401])
    }
    for (const path of [
      `/api/projects/${otherProject}/event_definitions/`, '/api/projects/1%2F..%2F2/event_definitions/', '//api/projects/1/event_definitions/',
      `/api/projects/0${otherProject}/event_definitions/`, `/api/projects/${otherProject}.0/event_definitions/`, '/api/projects/-1/event_definitions/',
      `/api/projects/1/../${otherProject}/event_definitions/`, '/api/projects/%40current/event_definitions/', '/api/projects/99999999999999999999/',
      '/api/projects/1/event_definitions/%00/', '/api/projects/1/persons/?distinct_id=%00', '/api/projects/1/persons/?distinct_id=%ED%A0%80',
      '/api/projects/1/event_definitions/?search=%FF%FE', '/api/projects/1/events/?event=%C0%AF',
    ]) {
      await check(path)
    }
    expect(problems).toEqual([])
  })
})
