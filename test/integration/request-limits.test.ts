// What one request may cost: page sizes capped on every list, definition search bounded, on both stores.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { recordSightings } from '../../src/definitions/repository'
import { startStack, type Stack, json } from '../helpers/stack'

for (const postgres of ['embedded', 'real'] as const) {
  describe(`request limits (${postgres} Postgres)`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' }, { PG_STATEMENT_TIMEOUT_MS: '2000' })
      // more definitions than the largest page
      const now = Date.now()
      await recordSightings(stack.services.db.sql, Array.from({ length: 1005 }, (_, i) => ({ teamId: 1, name: `event-${i}`, seenAt: now })))
    })
    afterAll(async () => {
      await stack?.close()
    })

    // (PGlite runs one statement at a time in-process, with no server-side timer: real Postgres only)
    if (postgres === 'real') {
      test('every Postgres statement of a request has a time limit (PG_STATEMENT_TIMEOUT_MS)', async () => {
        const [row] = await stack.services.db.sql<{ statement_timeout: string }[]>`show statement_timeout`
        expect(row!.statement_timeout).toBe('2s')
        // canceling statement due to statement timeout
        await expect(stack.services.db.sql`select pg_sleep(3)`).rejects.toMatchObject({ code: '57014' })
      })

      test('a listing whose client went away is cancelled in Postgres, not left running', async () => {
        const sql = stack.services.db.sql
        const running = async () =>
          (await sql<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity
             where query like '%from persons p where%' and state = 'active' and pid <> pg_backend_pid()`)[0]!.n
        // hold the table so the listing waits inside Postgres (a stand-in for a slow query)
        const locker = await sql.reserve()
        try {
          await locker`begin`
          await locker`lock table persons in access exclusive mode`
          const left = new AbortController()
          const stayed = stack.api('/api/projects/1/persons/', {})
          const abandoned = stack.api('/api/projects/1/persons/', { signal: left.signal }).catch((e) => e)
          await Bun.sleep(300)
          expect(await running()).toBe(2)
          left.abort()
          await abandoned
          await Bun.sleep(300)
          // the abandoned one is gone; the one whose client waits is still there
          expect(await running()).toBe(1)
          await locker`rollback`
          expect((await stayed).status).toBe(200)
        } finally {
          locker.release()
        }
      })
    }

    test('every list caps its page at 1000, whatever limit asks for', async () => {
      for (const list of ['/api/projects/', '/api/projects/@current/persons/', '/api/projects/@current/feature_flags/', '/api/projects/@current/event_definitions/']) {
        const r = await stack.api(`${list}?limit=9007199254740991`)
        expect(r.status).toBe(200)
        const body = await json(r)
        expect(body.results.length).toBeLessThanOrEqual(1000)
        if (body.next) expect(new URL(body.next).searchParams.get('limit')).toBe('1000')
      }
      const definitions = await json(stack.api('/api/projects/@current/event_definitions/?limit=9007199254740991'))
      expect(definitions.results).toHaveLength(1000)
      expect(definitions.count).toBe(1005)
      expect(new URL(definitions.next).searchParams.get('limit')).toBe('1000')
      const events = await stack.api('/api/projects/@current/events/?limit=9007199254740991')
      expect(events.status).toBe(200)
    })

    test('a project holds at most 5000 flags; oversized flags are refused with 400 limit_exceeded and attr', async () => {
      const big = await stack.api('/api/projects/@current/feature_flags/', {
        method: 'POST',
        json: { key: 'too-many-conditions', filters: { groups: Array.from({ length: 10_000 }, () => ({ properties: [], rollout_percentage: 100 })) } },
      })
      expect(big.status).toBe(400)
      expect(await json(big)).toMatchObject({ type: 'validation_error', code: 'limit_exceeded', attr: 'filters' })
      const longName = await stack.api('/api/projects/@current/feature_flags/', { method: 'POST', json: { key: 'long-name', name: 'n'.repeat(4001), filters: { groups: [] } } })
      expect(await json(longName)).toMatchObject({ type: 'validation_error', code: 'max_length', attr: 'name' })
      await stack.services.db.sql`
        insert into feature_flags (team_id, key, filters) select 1, 'bulk-' || i, '{"groups": []}' from generate_series(1, 4999) i`
      const last = await stack.api('/api/projects/@current/feature_flags/', { method: 'POST', json: { key: 'flag-5000', filters: { groups: [] } } })
      expect(last.status).toBe(201)
      const over = await stack.api('/api/projects/@current/feature_flags/', { method: 'POST', json: { key: 'flag-5001', filters: { groups: [] } } })
      expect(over.status).toBe(400)
      expect(await json(over)).toMatchObject({ type: 'validation_error', code: 'limit_exceeded' })
      await stack.services.db.sql`delete from feature_flags where team_id = 1 and (key like 'bulk-%' or key = 'flag-5000')`
    })

    test('every list reads limit and offset alike: the same error codes for the same mistakes', async () => {
      for (const list of ['/api/projects/', '/api/projects/@current/persons/', '/api/projects/@current/feature_flags/', '/api/projects/@current/event_definitions/', '/api/projects/@current/events/']) {
        expect(await json(stack.api(`${list}?limit=0`))).toMatchObject({ type: 'validation_error', code: 'min_value', attr: 'limit' })
        expect(await json(stack.api(`${list}?limit=abc`))).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr: 'limit' })
      }
    })

    test('definition search: at most 10 terms of at most 200 characters, refused with 400 naming search', async () => {
      const many = await stack.api(`/api/projects/@current/event_definitions/?search=${encodeURIComponent(Array(1000).fill('a').join(' '))}`)
      expect(many.status).toBe(400)
      expect(await json(many)).toMatchObject({ type: 'validation_error', attr: 'search' })
      const long = await stack.api(`/api/projects/@current/event_definitions/?search=${'a'.repeat(201)}`)
      expect(long.status).toBe(400)
      expect((await stack.api(`/api/projects/@current/event_definitions/?search=${encodeURIComponent(Array(10).fill('a').join(' '))}`)).status).toBe(200)
    })
  })
}
