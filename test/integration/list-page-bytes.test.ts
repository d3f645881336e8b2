// The persons and cohort-members pages stop at their byte budget (8 MiB, as the events API page): 30 persons with
// 400 KB of properties each (12 MB) come in pages that each stay under it, and `next` continues exactly: every person
// once, in order. Before, a page of large persons answered 100–161 MB in one response.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { LIST_PAGE_MAX_BYTES } from '../../src/http/pagination'
import { insertPerson } from '../helpers/flags'
import { BASE, json, startStack, type Stack } from '../helpers/stack'

const PERSONS = 30
const BLOB = 'x'.repeat(400 * 1024)

describe('list pages within their byte budget', () => {
  let stack: Stack
  let uuids: string[]
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' })
    for (let i = 0; i < PERSONS; i++) await insertPerson(stack.services.db.sql, [`big-${i}`], { big: BLOB, n: i, plan: 'big' })
    // newest first, as the persons list answers
    uuids = (await stack.services.db.sql<{ uuid: string }[]>`select uuid from persons where team_id = 1 order by created_at desc, id desc`).map((r) => r.uuid)
  }, 120_000)
  afterAll(() => stack?.close())

  /** Follow `next` from `path`: every page's size and items. */
  const walk = async (path: string) => {
    const pages: { bytes: number; ids: string[] }[] = []
    let url: string | null = `${BASE}${path}`
    while (url && pages.length < 20) {
      const r: Response = await stack.api(url.slice(BASE.length))
      expect(r.status).toBe(200)
      const text = await r.text()
      const body = JSON.parse(text) as { next: string | null; results: { uuid: string }[] }
      pages.push({ bytes: text.length, ids: body.results.map((p) => p.uuid) })
      url = body.next
    }
    return pages
  }
  const check = (name: string, pages: { bytes: number; ids: string[] }[], expected: string[]) => {
    console.log(`${name}: ${pages.length} pages of ${pages.map((p) => `${p.ids.length} persons/${(p.bytes / 1048576).toFixed(1)} MiB`).join(', ')}`)
    expect(pages.length).toBeGreaterThan(1)
    for (const p of pages) expect(p.bytes).toBeLessThan(LIST_PAGE_MAX_BYTES + 64 * 1024)
    expect(pages.flatMap((p) => p.ids)).toEqual(expected) // each once, in order: next continues exactly
  }

  test('persons: pages stop short at the budget and next continues exactly', async () => {
    check('persons', await walk('/api/projects/1/persons/?limit=100'), uuids)
    const metrics = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
    expect(metrics).toMatch(/list_pages_cut_total\{list="persons"\} [1-9]/)
    // a person alone larger than the budget still has its page (at least one a page)
    const one = await json(stack.api('/api/projects/1/persons/?distinct_id=big-3'))
    expect(one.results).toHaveLength(1)
  })

  test('a static cohort’s members and a dynamic cohort’s persons: the same', async () => {
    const byId = [...uuids].reverse() // members are listed oldest first (by person id)
    const created = await json(stack.api('/api/projects/1/cohorts/', { method: 'POST', json: { name: 'Big', is_static: true } }))
    const added = await stack.api(`/api/projects/1/cohorts/${created.id}/add_persons_to_static_cohort/`, { method: 'PATCH', json: { person_ids: byId } })
    expect(added.status).toBe(200)
    check('static cohort', await walk(`/api/projects/1/cohorts/${created.id}/persons/?limit=100`), byId)
    const dynamic = await json(
      stack.api('/api/projects/1/cohorts/', {
        method: 'POST',
        json: { name: 'Has big', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', type: 'person', operator: 'exact', value: 'big' }] }] } } },
      }),
    )
    check('dynamic cohort', await walk(`/api/projects/1/cohorts/${dynamic.id}/persons/?limit=100`), byId)
  })
})
