// The persons list narrowed as PostHog's persons API narrows it, through HTTP on embedded and real Postgres:
// `search` (a distinct id exactly, or a part of the email; LIKE's wildcards match themselves) and `properties`
// (exact person-property filters), each bounded before it reaches Postgres, with `next` paging through the matches
// and another project's persons never found.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { PERSON_SEARCH_LIMITS } from '../../src/people/search'
import { insertPerson } from '../helpers/flags'
import { BASE, json, startStack, type Stack, type StoreChoice } from '../helpers/stack'

for (const postgres of ['embedded', 'real'] as StoreChoice[]) {
  describe(`persons search on ${postgres} Postgres`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
      const sql = stack.services.db.sql
      for (let i = 0; i < 30; i++) await insertPerson(sql, [`anon-${i}`, `user-${i}`], { email: `Person${i}@Example.com`, plan: i % 3 === 0 ? 'pro' : 'free', seats: i % 3 })
      await insertPerson(sql, ['percent'], { email: 'a%b_c@example.com', plan: 'pro' })
      const other = await createProject(sql, { name: 'Other' })
      await insertPerson(sql, ['user-1'], { email: 'person1@example.com', plan: 'pro' }, other.id)
    }, 120_000)
    afterAll(() => stack?.close())

    const list = async (query: string) => {
      const r = await stack.api(`/api/projects/1/persons/?${query}`)
      return { status: r.status, body: await json(r) }
    }
    const emails = (body: { results: { properties: { email: string } }[] }) => body.results.map((p) => p.properties.email).sort()

    test('search: a part of the email (any case) or a distinct id exactly; another project is never searched', async () => {
      const part = await list('search=person2')
      expect(part.status).toBe(200)
      expect(emails(part.body)).toEqual(['Person2@Example.com', 'Person20@Example.com', 'Person21@Example.com', 'Person22@Example.com', 'Person23@Example.com', 'Person24@Example.com', 'Person25@Example.com', 'Person26@Example.com', 'Person27@Example.com', 'Person28@Example.com', 'Person29@Example.com'].sort())
      expect(part.body.count).toBe(11)
      const byId = await list('search=user-1')
      expect(emails(byId.body)).toEqual(['Person1@Example.com'])
      // a distinct id matches whole, not in part
      expect((await list('search=user-')).body.count).toBe(0)
      // % and _ are characters, not wildcards
      expect(emails((await list(`search=${encodeURIComponent('%b_')}`)).body)).toEqual(['a%b_c@example.com'])
      expect((await list(`search=${encodeURIComponent('%')}`)).body.count).toBe(1)
      // blank is no search
      expect((await list('search=%20%20')).body.count).toBe(31)
    })

    test('values of a person property for suggestions: most frequent first, narrowed, bounded, this project only', async () => {
      const values = async (query: string) => {
        const r = await stack.api(`/api/projects/1/persons/values/?${query}`)
        return { status: r.status, body: await json(r) }
      }
      // 20 free, 11 pro in project 1 (the other project's pro person is not counted)
      expect((await values('key=plan')).body).toEqual([{ name: 'free' }, { name: 'pro' }])
      expect((await values('key=plan&value=R')).body).toEqual([{ name: 'free' }, { name: 'pro' }])
      expect((await values('key=plan&value=fr')).body).toEqual([{ name: 'free' }])
      // % and _ are characters, not wildcards; numbers come back as text
      expect((await values(`key=email&value=${encodeURIComponent('%b_')}`)).body).toEqual([{ name: 'a%b_c@example.com' }])
      expect((await values('key=seats')).body).toEqual([{ name: '0' }, { name: '1' }, { name: '2' }])
      expect((await values('key=missing')).body).toEqual([])
      for (const [query, attr] of [['', 'key'], [`key=${'k'.repeat(401)}`, 'key'], [`key=plan&value=${'v'.repeat(201)}`, 'value']]) {
        const refused = await values(query)
        expect([refused.status, refused.body.attr]).toEqual([400, attr])
      }
      // an injection is a key like any other
      expect((await values(`key=${encodeURIComponent("plan' or 1=1 --")}`)).body).toEqual([])
    })

    test('properties: exact values (any of a list), combined with search; pages follow next through the matches', async () => {
      const pro = await list(`properties=${encodeURIComponent(JSON.stringify([{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }]))}&limit=4`)
      expect(pro.body.count).toBe(11)
      const seen: string[] = [...pro.body.results.map((p: { uuid: string }) => p.uuid)]
      let next: string | null = pro.body.next
      while (next) {
        const page = await json(stack.api(next.slice(BASE.length)))
        seen.push(...page.results.map((p: { uuid: string }) => p.uuid))
        next = page.next
      }
      expect(new Set(seen).size).toBe(11)
      const seats = await list(`properties=${encodeURIComponent(JSON.stringify([{ key: 'seats', value: [1, 2] }]))}`)
      expect(seats.body.count).toBe(20)
      const both = await list(`search=person1&properties=${encodeURIComponent(JSON.stringify([{ key: 'plan', value: 'pro' }]))}`)
      expect(emails(both.body)).toEqual(['Person12@Example.com', 'Person15@Example.com', 'Person18@Example.com'])
    })

    test('hostile input is a clear 400 naming the parameter, before any query runs', async () => {
      const refusals = [
        [`search=${'x'.repeat(PERSON_SEARCH_LIMITS.searchChars + 1)}`, 'search'],
        [`properties=${encodeURIComponent('not json')}`, 'properties'],
        [`properties=${encodeURIComponent(JSON.stringify(Array.from({ length: 11 }, () => ({ key: 'a', value: 'b' }))))}`, 'properties'],
        [`properties=${encodeURIComponent(JSON.stringify([{ key: 'a', value: 'v'.repeat(5000) }]))}`, 'properties'],
        [`properties=${encodeURIComponent(JSON.stringify([{ key: 'a', value: 'b', operator: 'regex' }]))}`, 'properties'],
        [`properties=${encodeURIComponent(JSON.stringify([{ key: 'a', value: { nested: [[[]]] } }]))}`, 'properties'],
      ] as const
      for (const [query, attr] of refusals) {
        const started = performance.now()
        const r = await list(query)
        expect({ status: r.status, type: r.body.type, attr: r.body.attr }).toEqual({ status: 400, type: 'validation_error', attr })
        console.log(`${attr} refused in ${(performance.now() - started).toFixed(1)} ms`)
      }
    })
  })
}
