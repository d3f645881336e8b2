// Strict JSON on the private API: a body holding NaN, Infinity or -Infinity is refused (400 parse_error) and nothing
// it named is written, while capture goes on reading them as null for the Python clients that send them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, embeddedEvents, json, learned, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

describe('NaN and Infinity in private API bodies', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20, RATE_LIMIT_API_PER_MINUTE: 0 })
  }, 120_000)
  afterAll(() => stack?.close())

  const send = (method: string, path: string, body: string) =>
    stack.api(path, { method, body, headers: { 'content-type': 'application/json' } })
  const parseError = async (r: Promise<Response>) => {
    const res = await r
    const body = await json(res)
    expect({ status: res.status, type: body.type, code: body.code, attr: body.attr }).toEqual({
      status: 400,
      type: 'validation_error',
      code: 'parse_error',
      attr: null,
    })
  }

  test('PATCH /api/projects/:id/ with week_start_day NaN, Infinity or -Infinity: 400, the setting unchanged', async () => {
    const project = await json(stack.api('/api/projects/@current/'))
    const path = `/api/projects/${project.id}/`
    const set = await stack.api(path, { method: 'PATCH', json: { week_start_day: 1 } })
    expect(set.status).toBe(200)
    for (const value of ['NaN', 'Infinity', '-Infinity']) {
      await parseError(send('PATCH', path, `{"week_start_day": ${value}}`))
      expect((await json(stack.api(path))).week_start_day).toBe(1)
    }
    // and 0, sent as a number, still changes it: the refusal is about the spelling, not the field
    expect((await json(stack.api(path, { method: 'PATCH', json: { week_start_day: 0 } }))).week_start_day).toBe(0)
  })

  test('an insight named NaN: 400, no insight made; the string "NaN" is a name like any other', async () => {
    const before = (await json(stack.api('/api/projects/@current/insights/?limit=1'))).count
    await parseError(send('POST', '/api/projects/@current/insights/', '{"name": NaN}'))
    await parseError(send('POST', '/api/projects/@current/insights/', '{"name": "x", "tags": [Infinity]}'))
    expect((await json(stack.api('/api/projects/@current/insights/?limit=1'))).count).toBe(before)
    const named = await stack.api('/api/projects/@current/insights/', { method: 'POST', json: { name: 'NaN' } })
    expect(named.status).toBe(201)
    expect((await json(named)).name).toBe('NaN')
  })

  test('capture keeps its tolerance: NaN and Infinity in properties arrive as null', async () => {
    const body = `{"api_key": "${PROJECT_KEY}", "event": "nan-check", "distinct_id": "py", "properties": {"ratio": NaN, "big": Infinity, "small": -Infinity}}`
    const r = await stack.app.handle(new Request(`${BASE}/capture/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }))
    expect(r.status).toBe(200)
    await learned(stack)
    // read from the store itself: the event list is one more private route, not what this test is about
    const db = await embeddedEvents(stack)
    let rows: { properties: string }[] = []
    for (let i = 0; i < 100 && rows.length === 0; i++) {
      rows = db.query("SELECT properties FROM events WHERE event = 'nan-check'").all() as { properties: string }[]
      if (rows.length === 0) await Bun.sleep(100)
    }
    db.close()
    expect(rows.map((r) => JSON.parse(r.properties)).map((p) => [p.ratio, p.big, p.small])).toEqual([[null, null, null]])
  })
})
