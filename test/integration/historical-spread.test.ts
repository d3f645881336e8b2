// Timestamps that cost or confuse a store, on the embedded store and ClickHouse 18.16: a batch spread over
// 56 years (one event a month: a part per month on ClickHouse) takes its own path while current events keep
// flowing; epoch 0 is stored and found the same everywhere; a NUL in an event name means one name everywhere.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, json, learned, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const SPREAD = Array.from({ length: 56 * 12 }, (_, i) => new Date(Date.UTC(1970 + Math.floor(i / 12), i % 12, 15)).toISOString())

async function send(stack: Stack, batch: Record<string, unknown>[]) {
  const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))
  expect(r.status).toBe(200)
}

async function all(stack: Stack, query: string): Promise<{ event: string; timestamp: string }[]> {
  const out: { event: string; timestamp: string }[] = []
  let url: string | null = `/api/projects/1/events/?limit=1000&${query}`
  for (let pages = 0; url !== null && pages < 10; pages++) {
    const page: { results: { event: string; timestamp: string }[]; next: string | null } = await json(stack.api(url.replace(BASE, '')))
    out.push(...page.results)
    url = page.next
  }
  return out
}

for (const clickhouse of ['embedded', 'real'] as StoreChoice[]) {
  describe(`awkward timestamps (${clickhouse === 'real' ? 'ClickHouse' : 'embedded'} event store)`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres: 'embedded', clickhouse }, { FLUSH_INTERVAL_MS: 20, HISTORY_HOLD_MS: 3000 })
    })
    afterAll(() => stack?.close())

    test('a batch spread over 56 years is stored whole; current events do not wait for it', async () => {
      await send(stack, [
        ...SPREAD.map((timestamp, i) => ({ event: 'backfill', distinct_id: 'spread', timestamp, properties: { i } })),
        ...Array.from({ length: 10 }, () => ({ event: 'live', distinct_id: 'spread' })),
      ])
      // the main path finishes first: current events are listed while the others may still be held
      const deadline = Date.now() + 30_000
      for (;;) {
        const stats = stack.services.captureLog.stats()
        if (stats.consumers.store?.position === stats.lastSeq) break
        if (Date.now() > deadline) throw new Error(`store consumer behind: ${JSON.stringify(stats)}`)
        await Bun.sleep(20)
      }
      expect(await all(stack, 'event=live')).toHaveLength(10)
      if (clickhouse === 'real') expect(stack.services.captureLog.stats().consumers.store_history).toBeDefined()
      await learned(stack, 60_000)
      const backfill = await all(stack, 'event=backfill')
      expect(backfill).toHaveLength(SPREAD.length)
      expect(new Set(backfill.map((e) => e.timestamp.slice(0, 7))).size).toBe(SPREAD.length)
      expect(backfill.at(-1)!.timestamp).toBe('1970-01-15T00:00:00Z')
      const deadLetters = (await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()).split('\n').filter((l) => l.startsWith('pipeline_dead_lettered'))
      expect(deadLetters.filter((l) => !l.endsWith(' 0'))).toEqual([])
    }, 120_000)

    test('epoch 0 is kept as the first storable second and found by after/before, on every store', async () => {
      await send(stack, [
        { event: 'epoch', distinct_id: 'e0', timestamp: 0 },
        { event: 'epoch', distinct_id: 'e0', timestamp: '1970-01-01T00:00:00.500Z' },
      ])
      await learned(stack, 60_000)
      const found = await all(stack, `event=epoch&after=${encodeURIComponent('1970-01-01T00:00:00Z')}&before=${encodeURIComponent('1970-01-01T00:00:02Z')}`)
      expect(found.map((e) => e.timestamp)).toEqual(['1970-01-01T00:00:01Z', '1970-01-01T00:00:01Z'])
    }, 60_000)

    test('a NUL in an event name is the same name in the event store and in its definition', async () => {
      await send(stack, [{ event: 'odd\u0000name', distinct_id: 'nul' }])
      await learned(stack, 60_000)
      const events = await all(stack, 'distinct_id=nul')
      expect(events.map((e) => e.event)).toEqual(['odd\ufffdname'])
      const definition = await json(stack.api(`/api/projects/1/event_definitions/by_name/?name=${encodeURIComponent('odd\ufffdname')}`))
      expect(definition.name).toBe('odd\ufffdname')
    }, 60_000)
  })
}
