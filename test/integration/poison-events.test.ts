// One bad event must never stop the pipeline. Each case once stopped learning for every project: the learner
// retried the batch forever, nothing behind it became a person, and the log could not be released.
// Real processes on real Postgres: capture, the flush worker, the learner, the CLI.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { runCli, spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

const eventually = async (check: () => Promise<boolean>, withinMs = 15_000): Promise<boolean> => {
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await Bun.sleep(100)
  }
  return false
}

describe('poison events', () => {
  let svc: ServiceProcess
  let env: Record<string, string>
  let sql: postgres.Sql

  beforeAll(async () => {
    env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
    svc = await spawnService({ ...env, FLUSH_INTERVAL_MS: '50', LOG_LEVEL: 'warn' })
    sql = postgres(env.DATABASE_URL!, { max: 1, onnotice: () => {} })
  })
  afterAll(async () => {
    await sql?.end()
    await svc?.stop()
  })

  const send = (path: string, body: unknown) => fetch(`${svc.url}${path}`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) })
  const personOf = async (distinctId: string): Promise<any> => {
    const r = await fetch(`${svc.url}/api/projects/@current/persons/?distinct_id=${encodeURIComponent(distinctId)}`, {
      headers: { authorization: `Bearer ${PERSONAL_KEY}` },
    })
    return ((await r.json()) as { results: any[] }).results[0]
  }
  const isPerson = (distinctId: string) => eventually(async () => (await personOf(distinctId)) !== undefined)
  const metric = async (name: string): Promise<string[]> =>
    (await (await fetch(`${svc.url}/metrics`)).text()).split('\n').filter((l) => l.startsWith(name))

  test('a capture nested 1,000,000 levels deep is refused at the request; the next $identify becomes a person', async () => {
    const deep = `{"api_key":"${PROJECT_KEY}","event":"deep","distinct_id":"d","properties":{"x":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}}`
    const r = await send('/capture/', deep)
    expect(r.status).toBe(400)
    expect(((await r.json()) as { detail: string }).detail).toContain('128 levels')
    // in a batch, the deep event alone is dropped and counted; the others are accepted
    const batch = `{"api_key":"${PROJECT_KEY}","batch":[{"event":"fine","distinct_id":"batch-ok"},{"event":"deep","distinct_id":${'['.repeat(200_000)}${']'.repeat(200_000)}}]}`
    expect((await send('/batch/', batch)).status).toBe(200)
    // /decide with such a distinct_id is a clear 400, not a 500
    const decide = await send('/decide/?v=3', `{"api_key":"${PROJECT_KEY}","distinct_id":${'['.repeat(200_000)}${']'.repeat(200_000)}}`)
    expect(decide.status).toBe(400)

    expect((await send('/capture/', { api_key: PROJECT_KEY, event: '$identify', distinct_id: 'after-deep', properties: { $set: { plan: 'pro' } } })).status).toBe(200)
    expect(await isPerson('after-deep')).toBe(true)
    expect(await eventually(async () => (await metric('capture_events_total{outcome="dropped_too_deep"}')).join().endsWith(' 1'))).toBe(true)
  })

  test('a year-0000 timestamp and an 8,000-character $anon_distinct_id are stored sensibly and learning goes on', async () => {
    const before = Date.now()
    const long = 'x'.repeat(8000)
    const r = await send('/batch/', {
      api_key: PROJECT_KEY,
      batch: [
        { event: 'ancient', distinct_id: 'year-zero', timestamp: '0000-06-01T00:00:00Z', properties: { $set: { email: 'z@example.com' } } },
        { event: '$identify', distinct_id: 'long-anon-user', properties: { $anon_distinct_id: long } },
        { event: '$create_alias', distinct_id: 'aliased-user', properties: { alias: `y${long}` } },
        { event: '$identify', distinct_id: 'behind-them', properties: { $set: { plan: 'team' } } },
      ],
    })
    expect(r.status).toBe(200)
    expect(await isPerson('behind-them')).toBe(true)
    const zero = await personOf('year-zero')
    expect(zero.properties.email).toBe('z@example.com')
    expect(new Date(zero.created_at).getTime()).toBeGreaterThanOrEqual(before - 1000)
    expect((await personOf('long-anon-user')).distinct_ids).toContain('x'.repeat(200))
    expect((await personOf('aliased-user')).distinct_ids).toContain(`y${'x'.repeat(199)}`)
    const events = await fetch(`${svc.url}/api/projects/@current/events/?event=ancient`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })
    const [ancient] = ((await events.json()) as { results: { timestamp: string }[] }).results
    expect(new Date(ancient!.timestamp).getTime()).toBeGreaterThanOrEqual(before - 1000)
  })

  test('an event the persons store refuses is dead-lettered alone; the rest of its batch is learned; replay brings it back', async () => {
    // Postgres refuses one person's properties (a check constraint: SQLSTATE 23514), as it would an impossible value.
    await sql`alter table persons add constraint refuse_poison check (not (properties ? 'poison'))`
    try {
      const r = await send('/batch/', {
        api_key: PROJECT_KEY,
        batch: [
          { event: '$identify', distinct_id: 'before-poison', properties: { $set: { n: 1 } } },
          { event: '$identify', distinct_id: 'poisoned', properties: { $set: { poison: true } } },
          { event: '$identify', distinct_id: 'after-poison', properties: { $set: { n: 3 } } },
        ],
      })
      expect(r.status).toBe(200)
      expect(await isPerson('before-poison')).toBe(true)
      expect(await isPerson('after-poison')).toBe(true)
      expect(await personOf('poisoned')).toBeUndefined()
      expect(await eventually(async () => (await metric('pipeline_dead_lettered_events_total{consumer="learn"')).length === 1)).toBe(true)
      expect((await metric('pipeline_dead_lettered_events_total{consumer="learn"'))[0]).toBe(
        'pipeline_dead_lettered_events_total{consumer="learn",reason="rejected_23514"} 1',
      )
      // the learner is caught up and /_ready says so
      expect(await eventually(async () => (await metric('pipeline_consumer_lag_records{consumer="learn"}'))[0] === 'pipeline_consumer_lag_records{consumer="learn"} 0')).toBe(true)
      expect((await fetch(`${svc.url}/_ready`)).status).toBe(200)

      const cliEnv = { DATA_DIR: env.DATA_DIR!, DATABASE_URL: env.DATABASE_URL!, LOG_LEVEL: 'silent' }
      const listed = JSON.parse((await runCli(['dlq', 'list'], cliEnv)).stdout)
      expect(listed.events).toBe(1)
      expect(listed.files[0].reasons).toEqual({ rejected_23514: 1 })
      // still refused: it stays dead-lettered, with the reason, and is not counted as replayed
      const refused = await runCli(['dlq', 'replay'], cliEnv)
      expect(JSON.parse(refused.stdout)).toEqual({ files: 1, replayed: 0, failed: 1 })
    } finally {
      await sql`alter table persons drop constraint if exists refuse_poison`
    }
    const cliEnv = { DATA_DIR: env.DATA_DIR!, DATABASE_URL: env.DATABASE_URL!, LOG_LEVEL: 'silent' }
    const replay = await runCli(['dlq', 'replay'], cliEnv)
    expect(JSON.parse(replay.stdout)).toEqual({ files: 1, replayed: 1, failed: 0 })
    expect((await personOf('poisoned')).properties.poison).toBe(true)
    expect(JSON.parse((await runCli(['dlq', 'list'], cliEnv)).stdout).events).toBe(0)
  })
})
