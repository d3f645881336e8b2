// Group type slots (five a project) cannot be taken for good by one anonymous event: a sixth type is refused,
// counted and logged; an admin lists, names and deletes types over PostHog's groups_types API, and a deleted
// type's index goes to the next new type, which flags then target. Both metadata stores.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, json, learned, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

async function send(stack: Stack, batch: Record<string, unknown>[]) {
  const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))
  expect(r.status).toBe(200)
}

async function metric(stack: Stack, line: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
    const found = text.split('\n').find((l) => l.startsWith(line))
    if (found) return Number(found.slice(line.length).trim())
    await Bun.sleep(50)
  }
  return 0
}

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`group types (${postgres} Postgres)`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20 })
    })
    afterAll(() => stack?.close())

    test('five junk types take every slot; the sixth is refused and counted; deleting one frees its index', async () => {
      // the attack: one anonymous event naming five types
      const junk = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`junk${i}`, `k${i}`]))
      await send(stack, [{ event: 'x', distinct_id: 'attacker', properties: { $groups: junk } }])
      await send(stack, [{ event: '$groupidentify', distinct_id: 'admin', properties: { $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'pro' } } }])
      await learned(stack)
      const listed = await json(stack.api('/api/projects/1/groups_types/'))
      expect(listed.map((g: { group_type: string }) => g.group_type)).toEqual(['junk0', 'junk1', 'junk2', 'junk3', 'junk4'])
      expect(await metric(stack, 'ingestion_person_updates_total{kind="group_types_refused"}')).toBe(1)

      // named, one and several at a time
      const named = await json(stack.api('/api/projects/1/groups_types/1/', { method: 'PATCH', json: { name_singular: 'Junk', name_plural: 'Junks' } }))
      expect(named).toMatchObject({ group_type: 'junk1', group_type_index: 1, name_singular: 'Junk', name_plural: 'Junks' })
      const bulk = await json(stack.api('/api/projects/1/groups_types/update_metadata/', { method: 'PATCH', json: [{ group_type_index: 2, name_singular: 'Two' }, { group_type_index: 3, name_plural: 'Threes' }] }))
      expect(bulk.map((g: { name_singular: string | null; name_plural: string | null }) => [g.name_singular, g.name_plural])).toEqual([['Two', null], [null, 'Threes']])
      expect((await stack.api('/api/projects/1/groups_types/9/', { method: 'PATCH', json: { name_singular: 'x' } })).status).toBe(400)

      // deleted: its index is free again, and the next new type takes it
      const deleted = await json(stack.api('/api/projects/1/groups_types/0/', { method: 'DELETE' }))
      expect(deleted).toMatchObject({ group_type: 'junk0', group_type_index: 0, groups_deleted: 0 })
      expect((await stack.api('/api/projects/1/groups_types/0/', { method: 'DELETE' })).status).toBe(404)
      await send(stack, [{ event: '$groupidentify', distinct_id: 'admin', properties: { $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'pro' } } }])
      await learned(stack)
      const after = await json(stack.api('/api/projects/1/groups_types/'))
      expect(after[0]).toMatchObject({ group_type: 'company', group_type_index: 0 })

      // and a group flag on it answers from the stored group
      const flag = await stack.api('/api/projects/1/feature_flags/', {
        method: 'POST',
        json: { key: 'pro-companies', filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }] } },
      })
      expect(flag.status).toBe(201)
      const decide = await json(
        stack.app.handle(new Request(`${BASE}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'someone', groups: { company: 'acme' } }) })),
      )
      expect(decide.featureFlags['pro-companies']).toBe(true)
    })

    test('deleting a type removes its groups and group property definitions', async () => {
      await send(stack, [{ event: '$groupidentify', distinct_id: 'admin', properties: { $group_type: 'junk2', $group_key: 'g1', $group_set: { seats: 3 } } }])
      await learned(stack)
      const definitions = await json(stack.api('/api/projects/1/property_definitions/?type=group&group_type_index=2'))
      expect(definitions.results.map((d: { name: string }) => d.name)).toContain('seats')
      const deleted = await json(stack.api('/api/projects/1/groups_types/2/', { method: 'DELETE' }))
      expect(deleted).toMatchObject({ group_type: 'junk2', groups_deleted: 1 })
      expect(deleted.property_definitions_deleted).toBeGreaterThan(0)
      const left = await json(stack.api('/api/projects/1/property_definitions/?type=group&group_type_index=2'))
      expect(left.results).toEqual([])
    })

    test('a deleted type stays blocked: the next anonymous event naming it is refused and counted, until an admin unblocks it', async () => {
      const indexOf = async (type: string) =>
        ((await json(stack.api('/api/projects/1/groups_types/'))) as { group_type: string; group_type_index: number }[]).find((g) => g.group_type === type)?.group_type_index
      const refusedBefore = await metric(stack, 'ingestion_person_updates_total{kind="group_types_refused"}')
      const junk3 = await indexOf('junk3')
      expect(junk3).toBe(3)
      expect((await json(stack.api('/api/projects/1/groups_types/3/', { method: 'DELETE' }))).blocked).toBe(true)
      const blocked = await json(stack.api('/api/projects/1/groups_types/blocked/'))
      expect(blocked.map((b: { group_type: string }) => b.group_type)).toEqual(expect.arrayContaining(['junk0', 'junk2', 'junk3']))
      expect(new Date(blocked[0].blocked_at).getTime()).toBeGreaterThan(0)

      // the attack again: anonymous events naming the deleted types (and identifying a group of one)
      const again = { junk0: 'k', junk2: 'k', junk3: 'k' }
      await send(stack, [
        { event: 'x', distinct_id: 'attacker', properties: { $groups: again } },
        { event: '$groupidentify', distinct_id: 'attacker', properties: { $group_type: 'junk3', $group_key: 'g', $group_set: { evil: true } } },
      ])
      await learned(stack)
      for (const type of ['junk0', 'junk2', 'junk3']) expect(await indexOf(type)).toBeUndefined()
      // (the flush worker's counters reach /metrics a moment later)
      let refused = 0
      for (let i = 0; i < 100 && refused < 3; i++, await Bun.sleep(50)) refused = (await metric(stack, 'ingestion_person_updates_total{kind="group_types_refused"}')) - refusedBefore
      expect(refused).toBeGreaterThanOrEqual(3)
      expect((await json(stack.api('/api/projects/1/property_definitions/?type=group&group_type_index=3'))).results).toEqual([])

      // a type no admin deleted still takes the free index
      await send(stack, [{ event: 'x', distinct_id: 'someone', properties: { $groups: { team: 't1' } } }])
      await learned(stack)
      expect(await indexOf('team')).toBe(2)

      // unblocked: events may name it again, and it takes the lowest free index
      expect((await stack.api('/api/projects/1/groups_types/unblock/', { method: 'POST', json: { group_type: 'junk3' } })).status).toBe(200)
      expect((await stack.api('/api/projects/1/groups_types/unblock/', { method: 'POST', json: { group_type: 'junk3' } })).status).toBe(404)
      expect((await stack.api('/api/projects/1/groups_types/unblock/', { method: 'POST', json: { group_type: '' } })).status).toBe(400)
      expect((await stack.api('/api/projects/1/groups_types/unblock/', { method: 'POST', json: {} })).status).toBe(400)
      await send(stack, [{ event: 'x', distinct_id: 'someone', properties: { $groups: { junk3: 'k' } } }])
      await learned(stack)
      expect(await indexOf('junk3')).toBe(3)
      const still = await json(stack.api('/api/projects/1/groups_types/blocked/'))
      expect(still.map((b: { group_type: string }) => b.group_type).sort()).toEqual(['junk0', 'junk2'])
    })
  })
}
