// Cohort nesting rules hold on every write, POST as PATCH: a nested id must name a cohort of the project (so a new
// cohort cannot close a loop by naming the id it is about to get), and no chain of cohorts inside cohorts may be
// deeper than /decide evaluates (MAX_COHORT_DEPTH): a flag on the top of a longer chain was false for everyone.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_COHORT_DEPTH } from '../../src/flags/engine'
import { json, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const nested = (id: number) => ({ key: 'id', type: 'cohort', value: id })
const tree = (...filters: unknown[]) => ({ properties: { type: 'OR', values: [{ type: 'AND', values: filters }] } })
const person = { key: 'plan', type: 'person', value: 'pro', operator: 'exact' }

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`cohort nesting on ${postgres} Postgres`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(() => stack?.close())
    const post = (name: string, filters: unknown) => stack.api('/api/projects/1/cohorts/', { method: 'POST', json: { name, filters } })

    test('POST: a chain deeper than MAX_COHORT_DEPTH is refused, as on PATCH', async () => {
      const first = (await json(post('level-1', tree(person)))).id as number
      let below = first
      for (let level = 2; level <= MAX_COHORT_DEPTH; level++) {
        const r = await post(`level-${level}`, tree(nested(below)))
        expect(r.status).toBe(201)
        below = (await json(r)).id
      }
      const r = await post('one-too-deep', tree(nested(below)))
      expect(r.status).toBe(400)
      expect((await json(r)).detail).toContain(`at most ${MAX_COHORT_DEPTH} deep`)
      // PATCH that lengthens the chain from the bottom is refused as well
      const bottom = (await json(post('bottom-extra', tree(person)))).id
      const p = await stack.api(`/api/projects/1/cohorts/${first}/`, { method: 'PATCH', json: { filters: tree(nested(bottom)) } })
      expect(p.status).toBe(400)
    })

    test('POST: an id the project does not have (such as the next id) is refused, so no loop can be built', async () => {
      const last = (await json(post('plain', tree(person)))).id as number
      for (const id of [last + 1, last + 2, 987654]) {
        const r = await post(`names-${id}`, tree(nested(id)))
        expect(r.status).toBe(400)
        expect((await json(r)).detail).toBe('Invalid Cohort ID in filter')
      }
    })
  })
}
