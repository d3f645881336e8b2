// A flag's change history through HTTP: every write recorded (by whatever path), newest first, with who and what
// changed; confined to the flag's project.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { json, startStack, type Stack, type StoreChoice } from '../helpers/stack'

describe.each(['embedded', 'real'] as StoreChoice[])('flag change history (%s Postgres)', (postgres) => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ postgres, clickhouse: 'embedded' })
  })
  afterAll(async () => {
    await stack?.close()
  })

  test('created, toggled, renamed, deleted: each entry says who changed which field from what to what', async () => {
    const created = await stack.api('/api/projects/1/feature_flags/', {
      method: 'POST',
      json: { key: 'history', name: 'First', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } },
    })
    expect(created.status).toBe(201)
    const { id } = await json(created)
    const patch = (body: unknown) => stack.api(`/api/projects/1/feature_flags/${id}/`, { method: 'PATCH', json: body })
    expect((await patch({ active: false })).status).toBe(200)
    expect((await patch({ name: 'Second' })).status).toBe(200)
    // a write that changes nothing adds nothing
    expect((await patch({ name: 'Second' })).status).toBe(200)
    expect((await patch({ deleted: true })).status).toBe(200)

    const page = await json(stack.api(`/api/projects/1/feature_flags/${id}/activity/`))
    expect(page.results.map((e: { activity: string }) => e.activity)).toEqual(['deleted', 'updated', 'updated', 'created'])
    const [deleted, renamed, toggled, first] = page.results
    expect(renamed.detail.changes).toEqual([{ type: 'FeatureFlag', action: 'changed', field: 'name', before: 'First', after: 'Second' }])
    expect(toggled.detail.changes).toEqual([{ type: 'FeatureFlag', action: 'changed', field: 'active', before: true, after: false }])
    expect(deleted.detail.changes.map((c: { field: string }) => c.field)).toEqual(['deleted'])
    expect(first.detail.changes.find((c: { field: string }) => c.field === 'filters').after.groups[0].rollout_percentage).toBe(50)
    expect(first.detail.changes.every((c: { action: string }) => c.action === 'created')).toBe(true)
    expect(first.user.email).toBe('admin@localhost')
    expect(first.detail.name).toBe('history')
    expect(page.next).toBeNull()

    const paged = await json(stack.api(`/api/projects/1/feature_flags/${id}/activity/?limit=2`))
    expect(paged.results).toHaveLength(2)
    expect(paged.next).toContain('offset=2')
  })

  test('another project’s flag, an unknown or malformed id: 404', async () => {
    const other = await createProject(stack.services.db.sql, { name: 'Other' })
    const flag = await json(stack.api(`/api/projects/${other.id}/feature_flags/`, { method: 'POST', json: { key: 'elsewhere', filters: { groups: [] } } }))
    expect((await stack.api(`/api/projects/${other.id}/feature_flags/${flag.id}/activity/`)).status).toBe(200)
    expect((await stack.api(`/api/projects/1/feature_flags/${flag.id}/activity/`)).status).toBe(404)
    expect((await stack.api('/api/projects/1/feature_flags/999999/activity/')).status).toBe(404)
    expect((await stack.api('/api/projects/1/feature_flags/abc/activity/')).status).toBe(404)
  })
})
