// Attacks on this round's hot-path changes seen over HTTP: the shared query parameters (queryOf), the token cache's
// slots, and the tallied request counters read by /metrics. A passing test documents a defence.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { createProject } from '../../src/projects/repository'
import { createFlag, decideRequest, flagsChanged, insertPerson } from '../helpers/flags'
import { BASE, json, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

let stack: Stack

beforeAll(async () => {
  stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' })
  // a flag on a stored person property: a /decide for it awaits the person's load between its two passes
  await createFlag(stack, {
    key: 'stored-plan',
    filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 }] },
  })
  await createFlag(stack, { key: 'everyone', filters: { groups: [{ properties: [], rollout_percentage: null }] } })
  for (let i = 0; i < 20; i++) await insertPerson(stack.services.db.sql, [`person-${i}`], { plan: i % 2 ? 'pro' : 'free' })
  await flagsChanged(stack)
}, 120_000)
afterAll(() => stack?.close())

async function decideAt(query: string, token: string, distinctId: string): Promise<{ status: number; body: any }> {
  const r = await stack.app.handle(decideRequest(`/decide/${query}`, { api_key: token, distinct_id: distinctId }))
  return { status: r.status, body: await json(r) }
}

/** http_requests_total's samples as /metrics shows them */
async function requestSamples(): Promise<Map<string, number>> {
  const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    const m = /^http_requests_total\{(.*)\} (\d+)$/.exec(line)
    if (m) samples.set(m[1], Number(m[2]))
  }
  return samples
}

describe('queryOf: one URLSearchParams shared by requests with the same query string', () => {
  test('concurrent /decide requests of v=1, 2, 3 that await their stored person each answer in their own version', async () => {
    const queries = ['?v=1', '?v=2', '?v=3', '', '?v=3&ip=1']
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => decideAt(queries[i % queries.length], PROJECT_KEY, `person-${i % 20}`).then((a) => ({ ...a, query: queries[i % queries.length], pro: i % 2 === 1 }))),
    )
    for (const a of answers) {
      expect(a.status).toBe(200)
      if (a.query === '?v=1' || a.query === '') {
        expect(Array.isArray(a.body.featureFlags)).toBe(true)
        expect([...a.body.featureFlags].sort()).toEqual(a.pro ? ['everyone', 'stored-plan'] : ['everyone'])
      } else if (a.query === '?v=2') {
        expect(a.body.featureFlags).toEqual(a.pro ? { everyone: true, 'stored-plan': true } : { everyone: true })
        expect('featureFlagPayloads' in a.body).toBe(false)
      } else {
        expect(a.body.featureFlags).toEqual({ everyone: true, 'stored-plan': a.pro })
        expect(a.body.featureFlagPayloads).toEqual({})
      }
    }
  })

  test('concurrent captures: gzip bodies (?compression=gzip-js), plain bodies, beacons each decoded and answered by their own query', async () => {
    const event = (i: number) => ({ api_key: PROJECT_KEY, event: 'attack', distinct_id: `c-${i}`, properties: {} })
    const kinds = ['gzip', 'plain', 'beacon'] as const
    const answers = await Promise.all(
      Array.from({ length: 90 }, async (_, i) => {
        const kind = kinds[i % 3]
        const body = kind === 'gzip' ? gzipSync(JSON.stringify(event(i))) : JSON.stringify(event(i))
        const query = kind === 'gzip' ? '?compression=gzip-js' : kind === 'beacon' ? '?beacon=1' : ''
        const r = await stack.app.handle(new Request(`${BASE}/e/${query}`, { method: 'POST', body, headers: { 'content-type': 'text/plain' } }))
        return { kind, status: r.status }
      }),
    )
    for (const a of answers) expect(a.status).toBe(a.kind === 'beacon' ? 204 : 200)
  })

  test('nothing writes to the parameters it is handed: the next request with that query string sees them unchanged', async () => {
    const query = '?v=3&ip=0&compression=&data='
    const first = await decideAt(query, PROJECT_KEY, 'person-1')
    const capture = await stack.app.handle(new Request(`${BASE}/e/${query}`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'x', distinct_id: 'q' }) }))
    const second = await decideAt(query, PROJECT_KEY, 'person-1')
    expect([first.status, capture.status, second.status]).toEqual([200, 200, 200])
    expect(second.body.featureFlags).toEqual(first.body.featureFlags)
    expect(Object.keys(second.body).sort()).toEqual(Object.keys(first.body).sort())
  })
})

describe('token cache slots', () => {
  test('after a token reset the old token is refused at once and the new one answers', async () => {
    const project = await createProject(stack.services.db.sql, { name: 'reset-me' })
    stack.services.tokens.add(project.api_token, project.id)
    expect((await decideAt('?v=3', project.api_token, 'a')).status).toBe(200)
    const reset = await stack.api(`/api/projects/${project.id}/reset_token/`, { method: 'PATCH' })
    expect(reset.status).toBe(200)
    const fresh = (await json(reset)).api_token as string
    expect(fresh).not.toBe(project.api_token)
    expect((await decideAt('?v=3', project.api_token, 'a')).status).toBe(401)
    expect((await decideAt('?v=3', fresh, 'a')).status).toBe(200)
  })

  test('a project deleted elsewhere: after the reload its token no longer resolves from a slot', async () => {
    const project = await createProject(stack.services.db.sql, { name: 'delete-me' })
    stack.services.tokens.add(project.api_token, project.id)
    expect(stack.services.tokens.cached(project.api_token)).toBe(project.id)
    await stack.services.db.sql`update projects set api_token_hash = 'gone-' || id, api_token = null where id = ${project.id}`
    await stack.services.tokens.invalidate()
    expect(stack.services.tokens.cached(project.api_token)).toBeUndefined()
    expect((await decideAt('?v=3', project.api_token, 'a')).status).toBe(401)
  })

  test('a token looked up before its project existed resolves once add() knows it', async () => {
    const token = `phc_attack_${crypto.randomUUID().replaceAll('-', '')}`
    expect(stack.services.tokens.cached(token)).toBeUndefined()
    const project = await createProject(stack.services.db.sql, { name: 'late', token })
    stack.services.tokens.add(token, project.id)
    expect(stack.services.tokens.cached(token)).toBe(project.id)
  })

  test('slots stay bounded under a flood of invented keys', () => {
    const tokens = stack.services.tokens as unknown as { slots: Map<string, unknown>; negativeMax: number }
    for (let i = 0; i < 25_000; i++) stack.services.tokens.cached(`phc_invented_${i}_${'x'.repeat(30)}`)
    expect(tokens.slots.size).toBeLessThanOrEqual(tokens.negativeMax)
  })
})

describe('http_requests_total tallies', () => {
  test('requests answered while /metrics is scraped are each counted exactly once', async () => {
    const key = 'route="/decide",method="POST",status="200"'
    const before = (await requestSamples()).get(key) ?? 0
    const work: Promise<unknown>[] = []
    for (let i = 0; i < 300; i++) {
      work.push(decideAt('?v=3', PROJECT_KEY, `person-${i % 20}`))
      if (i % 15 === 0) work.push(requestSamples())
    }
    await Promise.all(work)
    const samples = await requestSamples()
    expect(samples.get(key)! - before).toBe(300)
    // each label set once in the text (a tally and prom-client's own child never both shown)
    const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
    expect(text.split('\n').filter((l) => l.startsWith(`http_requests_total{${key}}`))).toHaveLength(1)
  })

  test('invented methods over real HTTP do not add label sets (the server refuses them before the app)', async () => {
    const server = Bun.serve({ port: 0, fetch: (request) => stack.app.handle(request) })
    try {
      const before = (await requestSamples()).size
      for (let i = 0; i < 200; i++) {
        const reply = await new Promise<string>((resolve) => {
          let got = ''
          void Bun.connect({
            hostname: '127.0.0.1',
            port: server.port as number,
            socket: {
              open: (s) => void s.write(`INVENTED${i} /decide/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
              data: (_s, d) => void (got += String(d)),
              close: () => resolve(got),
              error: () => resolve(got),
            },
          })
        })
        expect(reply.split('\r\n')[0]).toMatch(/^HTTP\/1\.1 4\d\d/)
      }
      // the methods Bun does accept, each once on an unmatched path: a bounded set
      for (const method of ['PROPFIND', 'MKCOL', 'LOCK', 'PURGE', 'REPORT', 'SEARCH', 'SUBSCRIBE', 'M-SEARCH', 'ACL', 'BIND']) {
        await fetch(`http://127.0.0.1:${server.port}/nowhere`, { method }).catch(() => undefined)
      }
      const after = await requestSamples()
      expect(after.size - before).toBeLessThanOrEqual(10)
      expect([...after.keys()].some((k) => k.includes('INVENTED'))).toBe(false)
    } finally {
      server.stop(true)
    }
  })
})
