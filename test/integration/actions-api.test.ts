// The actions REST API through HTTP on the embedded stores: PostHog's shape, list paging and search, PATCH and the
// soft delete, refusals naming their member (steps, matching, regexes, bounds), and project isolation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { BASE, json, startStack, type Stack } from '../helpers/stack'

describe('actions API', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' })
  })
  afterAll(() => stack?.close())

  const create = async (body: unknown) => {
    const r = await stack.api('/api/projects/1/actions/', { method: 'POST', json: body })
    const out = await json(r)
    if (r.status !== 201) throw new Error(`create action: ${r.status} ${JSON.stringify(out)}`)
    return out
  }
  const patch = (id: number, body: unknown) => stack.api(`/api/projects/1/actions/${id}/`, { method: 'PATCH', json: body })
  const refusal = async (r: Promise<Response>) => {
    const res = await r
    return { status: res.status, ...(await json(res)) }
  }
  const refusedCreate = (body: unknown) => refusal(stack.api('/api/projects/1/actions/', { method: 'POST', json: body }))

  test('create answers PostHog\'s shape; retrieve and list answer the same action', async () => {
    const action = await create({
      name: 'Signed up',
      description: 'the sign-up page or the event',
      tags: ['growth', 'growth'],
      steps: [
        { event: '$pageview', url: '/signup', properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }] },
        { event: 'signup', url: 'https://x.test/signup', url_matching: 'exact' },
        { event: '$autocapture', text: 'Sign up', text_matching: 'exact', selector: 'button.cta' },
      ],
    })
    expect(action).toMatchObject({
      name: 'Signed up',
      description: 'the sign-up page or the event',
      tags: ['growth'],
      post_to_slack: false,
      slack_message_format: '',
      deleted: false,
      is_calculating: false,
      pinned_at: null,
      bytecode_error: null,
      team_id: 1,
      created_by: { email: expect.any(String) },
    })
    expect(typeof action.id).toBe('number')
    expect(action.created_at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/)
    expect(action.steps).toEqual([
      { event: '$pageview', url: '/signup', url_matching: 'contains', properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }], text: null, text_matching: null, href: null, href_matching: null, selector: null, tag_name: null },
      { event: 'signup', url: 'https://x.test/signup', url_matching: 'exact', properties: [], text: null, text_matching: null, href: null, href_matching: null, selector: null, tag_name: null },
      { event: '$autocapture', url: null, url_matching: null, properties: [], text: 'Sign up', text_matching: 'exact', href: null, href_matching: null, selector: 'button.cta', tag_name: null },
    ])
    expect(await json(stack.api(`/api/projects/1/actions/${action.id}/`))).toEqual(action)
    const list = await json(stack.api('/api/projects/1/actions/?search=SIGNED'))
    expect(list).toMatchObject({ count: 1, next: null, previous: null })
    expect(list.results[0]).toEqual(action)
  })

  test('lists are paged with absolute links, by name', async () => {
    for (const name of ['Page b', 'Page a', 'Page c']) await create({ name, steps: [{ event: name }] })
    const first = await json(stack.api('/api/projects/1/actions/?search=Page&limit=2'))
    expect(first.count).toBe(3)
    expect(first.results.map((a: { name: string }) => a.name)).toEqual(['Page a', 'Page b'])
    expect(first.next).toBe(`${BASE}/api/projects/1/actions/?search=Page&limit=2&offset=2`)
    const second = await json(stack.api(new URL(first.next).pathname + new URL(first.next).search))
    expect(second.results.map((a: { name: string }) => a.name)).toEqual(['Page c'])
    expect(second.previous).toBe(`${BASE}/api/projects/1/actions/?search=Page&limit=2`)
  })

  test('PATCH changes what it names; deleted: true removes it from the list (retrieve still answers); DELETE is 405', async () => {
    const action = await create({ name: 'To change', steps: [{ event: 'a' }] })
    const changed = await json(patch(action.id, { description: 'now described', steps: [{ event: 'b' }, { url: 'docs', url_matching: 'regex' }] }))
    expect(changed).toMatchObject({ name: 'To change', description: 'now described', steps: [{ event: 'b' }, { event: null, url: 'docs', url_matching: 'regex' }] })
    expect((await patch(action.id, { deleted: true })).status).toBe(200)
    expect((await json(stack.api('/api/projects/1/actions/?search=To%20change'))).count).toBe(0)
    expect(await json(stack.api(`/api/projects/1/actions/${action.id}/`))).toMatchObject({ deleted: true })
    // its name is free again once deleted
    await create({ name: 'To change', steps: [] })
    // restoring it under a taken name is refused
    expect(await refusal(patch(action.id, { deleted: false }))).toMatchObject({ status: 400, code: 'unique', attr: 'name' })
    expect((await stack.api(`/api/projects/1/actions/${action.id}/`, { method: 'DELETE' })).status).toBe(405)
  })

  test('refusals name their member', async () => {
    expect(await refusedCreate({ steps: [] })).toMatchObject({ status: 400, code: 'required', attr: 'name' })
    expect(await refusedCreate({ name: '  ' })).toMatchObject({ status: 400, code: 'blank', attr: 'name' })
    await create({ name: 'Taken' })
    expect(await refusedCreate({ name: 'Taken' })).toMatchObject({ status: 400, code: 'unique', attr: 'name', detail: expect.stringContaining('already has an action with this name') })
    expect(await refusedCreate({ name: 'n', steps: {} })).toMatchObject({ status: 400, attr: 'steps' })
    expect(await refusedCreate({ name: 'n', steps: [{ url: 'x', url_matching: 'glob' }] })).toMatchObject({ status: 400, code: 'invalid_choice', attr: 'steps__0__url_matching' })
    expect(await refusedCreate({ name: 'n', steps: [{}, { url: '(unclosed', url_matching: 'regex' }] })).toMatchObject({ status: 400, code: 'invalid_regex', attr: 'steps__1__url' })
    expect(await refusedCreate({ name: 'n', steps: [{ text: 'a'.repeat(1001), text_matching: 'regex' }] })).toMatchObject({ status: 400, attr: 'steps__0__text' })
    expect(await refusedCreate({ name: 'n', steps: [{ url: 'x'.repeat(3000) }] })).toMatchObject({ status: 400, code: 'max_length', attr: 'steps__0__url' })
    expect(await refusedCreate({ name: 'n', steps: Array.from({ length: 51 }, () => ({ event: 'e' })) })).toMatchObject({ status: 400, code: 'max_length', attr: 'steps' })
    expect(await refusedCreate({ name: 'n', steps: [{ properties: [{ key: 'plan', operator: 'nope', value: 1 }] }] })).toMatchObject({ status: 400, attr: 'steps__0__properties__0' })
    expect(await refusedCreate({ name: 'n', steps: [{ properties: [{ key: 'a"b', value: 1 }] }] })).toMatchObject({ status: 400, attr: 'steps__0__properties__0__key' })
    expect(await refusedCreate({ name: 'n', steps: [{ properties: [{ key: 'p', value: '[', operator: 'regex' }] }] })).toMatchObject({ status: 400, code: 'invalid_regex', attr: 'steps__0__properties__0__value' })
    expect(await refusedCreate({ name: 'n', steps: [{ properties: Array.from({ length: 21 }, () => ({ key: 'p', value: 1 })) }] })).toMatchObject({ status: 400, attr: 'steps__0__properties' })
    expect(await refusedCreate({ name: 'n', tags: 'x' })).toMatchObject({ status: 400, attr: 'tags' })
    expect(await refusedCreate({ name: 'n', post_to_slack: 'yes' })).toMatchObject({ status: 400, attr: 'post_to_slack' })
    expect(await refusal(stack.api('/api/projects/1/actions/999999/'))).toMatchObject({ status: 404 })
    expect(await refusal(stack.api('/api/projects/1/actions/abc/'))).toMatchObject({ status: 404 })
  })

  test('hostile: 50 steps of regexes are checked in bounded time; past the action\'s total of regex characters, refused by name', async () => {
    // counted repeats make RE2's programs large: the costliest patterns per character
    const unit = '[a-z]{1,9}\\d?'
    const pattern = (n: number) => {
      const body = `(?:${unit.repeat(Math.floor((n - 4) / unit.length))})`
      return body + 'a'.repeat(n - body.length)
    }
    const steps = (n: number) => Array.from({ length: 50 }, (_, i) => ({ event: `e${i}`, url: pattern(n), url_matching: 'regex' }))
    let started = performance.now()
    const fits = await stack.api('/api/projects/1/actions/', { method: 'POST', json: { name: 'Hostile', steps: steps(200) } })
    const fitsMs = performance.now() - started
    expect(fits.status).toBe(201)
    started = performance.now()
    const tooMany = await refusal(stack.api('/api/projects/1/actions/', { method: 'POST', json: { name: 'Hostile 2', steps: steps(1000) } }))
    const refusedMs = performance.now() - started
    console.log(`[actions] 50 regexes of 200 characters checked and stored in ${fitsMs.toFixed(0)} ms; 50 of 1000 refused in ${refusedMs.toFixed(0)} ms`)
    expect(tooMany).toMatchObject({ status: 400, code: 'max_length', attr: 'steps__10__url', detail: expect.stringContaining('10000 characters together') })
    expect(fitsMs).toBeLessThan(5_000)
    expect(refusedMs).toBeLessThan(5_000)
  })

  test('projects are isolated: another project\'s action is 404 to read and change', async () => {
    const sql = stack.services.db.sql
    const [org] = await sql`insert into organizations (name) values ('Elsewhere') returning id`
    const other = await createProject(sql, { name: 'Not yours', organizationId: org.id })
    const [{ id: theirs }] = await sql`insert into actions (team_id, name, steps) values (${other.id}, 'Theirs', '[]') returning id`
    expect((await stack.api(`/api/projects/1/actions/${theirs}/`)).status).toBe(404)
    expect((await patch(theirs, { name: 'Mine now' })).status).toBe(404)
    expect((await json(stack.api('/api/projects/1/actions/?search=Theirs'))).count).toBe(0)
    // nor can an insight of this project count its events
    const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'TrendsQuery', series: [{ kind: 'ActionsNode', id: theirs }] } } })
    expect(r.status).toBe(404)
  })
})
