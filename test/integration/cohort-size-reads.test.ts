// A dynamic cohort's size is computed when the cohort is read: one scan of the project's persons. A dashboard (or
// a hostile key holder) reading one cohort many times at once made as many scans at once; now the reads of one
// cohort under way together share one scan. Timings are printed; statuses, sizes and scan counts are asserted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, json, startStack, type Stack } from '../helpers/stack'

const PERSONS = 30_000
const READS = 20

async function scans(stack: Stack): Promise<number> {
  const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
  return Number(/^cohort_size_scans_total (\d+)/m.exec(text)?.[1] ?? 0)
}

describe('reading a dynamic cohort many times at once (embedded Postgres)', () => {
  let stack: Stack
  let cohort: number
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' })
    await stack.services.db.sql`
      insert into persons (uuid, team_id, properties)
      select gen_random_uuid(), 1, jsonb_build_object('plan', case when i % 10 = 0 then 'pro' else 'free' end)
        from generate_series(1, ${PERSONS}) as i`
    const created = await stack.api('/api/projects/1/cohorts/', {
      method: 'POST',
      json: { name: 'Pro', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }] } } },
    })
    expect(created.status).toBe(201)
    cohort = (await json(created)).id
  }, 240_000)
  afterAll(async () => stack?.close())

  test(`${READS} reads at once: one scan, every read answers the size`, async () => {
    const before = await scans(stack)
    const started = performance.now()
    const answers = await Promise.all(Array.from({ length: READS }, () => stack.api(`/api/projects/1/cohorts/${cohort}/`)))
    const bodies = await Promise.all(answers.map((r) => json(r)))
    const made = (await scans(stack)) - before
    console.log(`${READS} concurrent reads, ${PERSONS} persons: ${made} scan(s) in ${(performance.now() - started).toFixed(0)} ms`)
    expect(answers.every((r) => r.status === 200)).toBe(true)
    expect(bodies.every((b) => b.count === PERSONS / 10)).toBe(true)
    expect(made).toBe(1)
    // a later read scans again: the size is the one now
    await stack.services.db.sql`update persons set properties = jsonb_build_object('plan', 'pro') where team_id = 1 and id = (select min(id) from persons where team_id = 1 and properties->>'plan' = 'free')`
    expect((await json(stack.api(`/api/projects/1/cohorts/${cohort}/`))).count).toBe(PERSONS / 10 + 1)
    expect((await scans(stack)) - before).toBe(2)
  }, 240_000)
})
