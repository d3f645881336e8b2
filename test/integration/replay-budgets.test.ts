// Session replay's budgets through /s/ with small caps, on the embedded stores and on ClickHouse 18.16 + Postgres:
// a session past RECORDING_MAX_SESSION_BYTES and a project past RECORDING_MAX_PROJECT_DAILY_BYTES are answered 200
// with quota_limited (PostHog's answer: the client does not retry) and dropped, counted in
// recording_bytes_refused_total{reason}; what was accepted before is stored.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const SESSION_CAP = 4000
const DAILY_CAP = 12_000
const T0 = Date.now() - 60_000

/** One $snapshot request of about 1 KB of JSON for a session. */
function body(sessionId: string, n: number): string {
  const t = T0 + n * 1000
  return JSON.stringify([
    {
      event: '$snapshot',
      properties: {
        $session_id: sessionId,
        $window_id: 'w-1',
        distinct_id: 'budget-user',
        token: PROJECT_KEY,
        $snapshot_data: [
          { type: 4, data: { href: 'https://shop.example/budget', width: 1280, height: 720 }, timestamp: t },
          { type: 3, data: { source: 5, text: 'x'.repeat(800), isChecked: false, id: 7 }, timestamp: t + 10 },
        ],
      },
    },
  ])
}

const send = async (stack: Stack, sessionId: string, n: number) => {
  const r = await stack.app.handle(new Request(`${BASE}/s/?compression=none`, { method: 'POST', body: body(sessionId, n), headers: { 'content-type': 'application/json' } }))
  expect(r.status).toBe(200)
  return (await r.json()) as { status: number; quota_limited?: string[] }
}

async function refusedBytes(stack: Stack, reason: string): Promise<number> {
  const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
  const line = text.split('\n').find((l) => l.startsWith(`recording_bytes_refused_total{reason="${reason}"}`))
  return line ? Number(line.split(' ').pop()) : 0
}

async function listed(stack: Stack, sessionId: string): Promise<boolean> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const list = (await (await stack.api('/api/projects/1/session_recordings/?limit=100')).json()) as { results: { id: string }[] }
    if (list.results.some((r) => r.id === sessionId)) return true
    if (Date.now() > deadline) return false
    await Bun.sleep(50)
  }
}

for (const choice of [
  { postgres: 'embedded', clickhouse: 'embedded' },
  { postgres: 'real', clickhouse: 'real' },
] as { postgres: StoreChoice; clickhouse: StoreChoice }[]) {
  describe(`session replay budgets (${choice.clickhouse === 'real' ? 'ClickHouse + Postgres' : 'embedded stores'}, small caps)`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack(choice, { FLUSH_INTERVAL_MS: 50, RECORDING_MAX_SESSION_BYTES: SESSION_CAP, RECORDING_MAX_PROJECT_DAILY_BYTES: DAILY_CAP })
    })
    afterAll(() => stack?.close())

    test('a session past its cap is answered 200 quota_limited and dropped; another session goes on', async () => {
      const size = body('long-session', 0).length
      const fits = Math.floor(SESSION_CAP / size)
      expect(fits).toBeGreaterThanOrEqual(2)
      for (let i = 0; i < fits; i++) expect(await send(stack, 'long-session', i)).toEqual({ status: 1 })
      expect(await send(stack, 'long-session', fits)).toEqual({ status: 1, quota_limited: ['recordings'] })
      expect(await send(stack, 'long-session', fits + 1)).toEqual({ status: 1, quota_limited: ['recordings'] })
      expect(await refusedBytes(stack, 'session_bytes')).toBe(2 * size)
      expect(await send(stack, 'other-session', 0)).toEqual({ status: 1 })

      // stored in log order: once the later session is listed, every accepted request of the first is stored, and the
      // recording ends with the last accepted request's last event (the dropped ones were 1 s later each)
      expect(await listed(stack, 'other-session')).toBe(true)
      const one = (await (await stack.api('/api/projects/1/session_recordings/long-session/')).json()) as { start_time: string; end_time: string }
      expect(Date.parse(one.end_time) - Date.parse(one.start_time)).toBe((fits - 1) * 1000 + 10)
    }, 60_000)

    test("a project past its daily bytes is answered 200 quota_limited for every session, counted by reason", async () => {
      let accepted = 0
      let limited: { status: number; quota_limited?: string[] } | null = null
      // the first test spent some of today's bytes already; new sessions each, so that only the daily cap applies
      for (let i = 0; i < 40 && !limited; i++) {
        const answer = await send(stack, `daily-${i}`, 0)
        if (answer.quota_limited) limited = answer
        else accepted++
      }
      expect(limited).toEqual({ status: 1, quota_limited: ['recordings'] })
      expect(accepted).toBeGreaterThan(0)
      expect(await send(stack, 'daily-fresh', 0)).toEqual({ status: 1, quota_limited: ['recordings'] })
      expect(await refusedBytes(stack, 'project_daily_bytes')).toBe(body(`daily-${accepted}`, 0).length + body('daily-fresh', 0).length)
      // the dropped session is never stored; the accepted ones are
      expect(await listed(stack, `daily-${accepted - 1}`)).toBe(true)
      const list = (await (await stack.api('/api/projects/1/session_recordings/?limit=100')).json()) as { results: { id: string }[] }
      expect(list.results.map((r) => r.id)).not.toContain('daily-fresh')
      expect(list.results.map((r) => r.id)).not.toContain(`daily-${accepted}`)
    }, 60_000)
  })
}
