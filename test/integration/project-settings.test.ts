// A project's timezone and first day of the week (what insights bucket and label in): UTC and Sunday by default,
// returned by GET and the list, changed by PATCH; an unknown zone, a bad day, a hostile value, an unknown member
// or a read-only key change nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createUser } from '../../src/projects/accounts'
import { createPersonalKeyFor } from '../../src/projects/personal-keys'
import { json, startStack, type Stack, type StoreChoice } from '../helpers/stack'

for (const postgres of ['embedded', 'real'] as StoreChoice[]) {
  describe(`project timezone and week start (${postgres} Postgres)`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(async () => {
      await stack?.close()
    })

    const patch = (body: unknown, headers: Record<string, string> = {}) =>
      stack.api('/api/projects/1/', { method: 'PATCH', json: body, headers })

    test('UTC and Sunday by default; PATCH sets them; GET, @current and the list return them', async () => {
      const before = await json(stack.api('/api/projects/1/'))
      expect(before.timezone).toBe('UTC')
      expect(before.week_start_day).toBe(0)

      const changed = await patch({ timezone: 'Asia/Kathmandu', week_start_day: 1 })
      expect(changed.status).toBe(200)
      expect(await json(changed)).toMatchObject({ id: 1, timezone: 'Asia/Kathmandu', week_start_day: 1 })
      expect(await json(stack.api('/api/projects/@current/'))).toMatchObject({ timezone: 'Asia/Kathmandu', week_start_day: 1 })
      const listed = await json(stack.api('/api/projects/'))
      expect(listed.results.find((p: { id: number }) => p.id === 1)).toMatchObject({ timezone: 'Asia/Kathmandu', week_start_day: 1 })

      // one member at a time leaves the other; the answer read back can be sent as is (its other members ignored)
      expect(await json(patch({ ...before, timezone: 'America/New_York', week_start_day: 1, name: 'ignored' }))).toMatchObject({ timezone: 'America/New_York', week_start_day: 1, name: before.name })
      expect(await json(patch({ week_start_day: null }))).toMatchObject({ timezone: 'America/New_York', week_start_day: 0 })
      expect(await json(patch({ timezone: 'UTC' }))).toMatchObject({ timezone: 'UTC' })
      expect((await patch({})).status).toBe(200)
    })

    test('bad values: 400 naming the member, nothing changed', async () => {
      await patch({ timezone: 'Europe/Paris', week_start_day: 1 })
      const cases: [unknown, string][] = [
        [{ timezone: 'Mars/Olympus_Mons' }, 'timezone'],
        [{ timezone: 'europe/paris' }, 'timezone'],
        [{ timezone: '' }, 'timezone'],
        [{ timezone: 'x'.repeat(100_000) }, 'timezone'],
        [{ timezone: 5 }, 'timezone'],
        [{ timezone: ['UTC'] }, 'timezone'],
        [{ timezone: { a: 1 } }, 'timezone'],
        [{ week_start_day: 2 }, 'week_start_day'],
        [{ week_start_day: -1 }, 'week_start_day'],
        [{ week_start_day: '1' }, 'week_start_day'],
        [{ week_start_day: 0.5 }, 'week_start_day'],
        // a good member does not carry a bad one
        [{ timezone: 'UTC', week_start_day: 7 }, 'week_start_day'],
      ]
      for (const [body, attr] of cases) {
        const response = await patch(body)
        const answer = await json(response)
        expect(response.status).toBe(400)
        expect(answer).toMatchObject({ type: 'validation_error', code: 'invalid_choice', attr })
        expect(answer.detail.length).toBeLessThan(200)
      }
      const unknown = await patch({ timezone: 'UTC', time_zone: 'UTC' })
      expect(unknown.status).toBe(400)
      expect(await json(unknown)).toMatchObject({ code: 'invalid_input', attr: 'time_zone' })
      for (const body of ['[]', '"UTC"', 'null', '{"timezone":']) {
        const response = await stack.api('/api/projects/1/', { method: 'PATCH', body, headers: { 'content-type': 'application/json' } })
        expect(response.status).toBe(400)
      }
      expect(await json(stack.api('/api/projects/1/'))).toMatchObject({ timezone: 'Europe/Paris', week_start_day: 1 })
    })

    test('a key with project:read cannot change them; project:write can', async () => {
      const user = await createUser(stack.services.db.sql, { email: `tz-${crypto.randomUUID().slice(0, 8)}@example.com` })
      const reader = (await createPersonalKeyFor(stack.services.db.sql, user.id, { label: 'reader', scopes: ['project:read'] })).value!
      const writer = (await createPersonalKeyFor(stack.services.db.sql, user.id, { label: 'writer', scopes: ['project:write'] })).value!
      const refused = await patch({ timezone: 'Asia/Tokyo' }, { authorization: `Bearer ${reader}` })
      expect(refused.status).toBe(403)
      expect((await json(stack.api('/api/projects/1/', { headers: { authorization: `Bearer ${reader}` } }))).timezone).not.toBe('Asia/Tokyo')
      const accepted = await patch({ timezone: 'Asia/Tokyo' }, { authorization: `Bearer ${writer}` })
      expect(accepted.status).toBe(200)
      expect((await json(accepted)).timezone).toBe('Asia/Tokyo')
    })
  })
}
