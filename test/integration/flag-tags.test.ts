// A PostHog flag export posted as is keeps its tags: stored (as PostHog's tagify leaves them) and returned, on
// create, retrieve, list and PATCH; a flag without tags has [].
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { json, startStack, type Stack, type StoreChoice } from '../helpers/stack'

/** A flag as PostHog's API lists it (what an export script saves), id and all. */
const EXPORTED = {
  id: 4711,
  name: 'New checkout',
  key: 'new-checkout',
  filters: { groups: [{ variant: null, properties: [], rollout_percentage: 30 }], payloads: {}, multivariate: null },
  deleted: false,
  active: true,
  created_by: { id: 1, uuid: '0189c2d1-0000-0000-0000-000000000000', distinct_id: 'x', first_name: 'A', email: 'a@example.com' },
  created_at: '2025-01-01T00:00:00Z',
  is_simple_flag: true,
  rollout_percentage: 30,
  ensure_experience_continuity: false,
  experiment_set: [],
  surveys: [],
  features: [],
  rollback_conditions: null,
  performed_rollback: false,
  can_edit: true,
  tags: ['Checkout', 'growth ', 'checkout'],
  usage_dashboard: 12,
  analytics_dashboards: [],
  has_enriched_analytics: false,
}

for (const postgres of ['embedded', 'real'] as StoreChoice[]) {
  describe(`flag tags (${postgres} Postgres)`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(async () => {
      await stack?.close()
    })

    test('an exported flag posted as is keeps its tags; PATCH changes them; a flag without tags has none', async () => {
      const created = await stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: EXPORTED })
      const flag = await json(created)
      expect(created.status).toBe(201)
      expect(flag.tags).toEqual(['checkout', 'growth'])
      expect((await json(stack.api(`/api/projects/1/feature_flags/${flag.id}/`))).tags).toEqual(['checkout', 'growth'])
      const listed = await json(stack.api('/api/projects/1/feature_flags/'))
      expect(listed.results.find((f: { key: string }) => f.key === 'new-checkout').tags).toEqual(['checkout', 'growth'])

      const patched = await stack.api(`/api/projects/1/feature_flags/${flag.id}/`, { method: 'PATCH', json: { tags: ['beta'] } })
      expect(patched.status).toBe(200)
      expect((await json(patched)).tags).toEqual(['beta'])
      // a PATCH without tags leaves them
      expect((await json(stack.api(`/api/projects/1/feature_flags/${flag.id}/`, { method: 'PATCH', json: { name: 'Renamed' } }))).tags).toEqual(['beta'])
      expect((await json(stack.api(`/api/projects/1/feature_flags/${flag.id}/`, { method: 'PATCH', json: { tags: [] } }))).tags).toEqual([])

      const plain = await json(stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'no-tags', filters: { groups: [{ rollout_percentage: 100 }] } } }))
      expect(plain.tags).toEqual([])

      const bad = await stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'bad-tags', tags: 'one' } })
      expect(bad.status).toBe(400)
      expect((await json(bad)).attr).toBe('tags')
    })
  })
}
