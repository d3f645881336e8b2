// Web analytics over 110,000 sessions on the embedded DuckDB store (a hostile site: half its sessions on a page of
// their own): the answers are the ones worked out here, their size is bounded by the rows shown (the previous period
// and the entry bounce rates are read for the shown pages only, not for the 10,000 pages of most visitors), and the
// time is logged (docs/insights.md carries it to a million sessions).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { accessDuckDb } from '../../src/events/duckdb-access'
import type { StoredEvent } from '../../src/events/store'
import type { MappingRow } from '../../src/query/person-mapping'
import { json, startStack, type Stack } from '../helpers/stack'

const SESSIONS = 100_000
const PREVIOUS = 10_000
const DAY = Date.UTC(2024, 4, 10)
const DAY_MS = 86_400_000
/** Session i: even ones on one of ten shared pages, odd ones on a page of their own; a second view for every third. */
const path = (i: number) => (i % 2 === 0 ? `/top/${(i / 2) % 10}` : `/own/${i}`)

describe('web analytics over 110,000 sessions: embedded DuckDB store', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' })
    const events: StoredEvent[] = []
    const mapping: MappingRow[] = []
    const session = (i: number, start: number, prefix: string) => {
      const person = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`
      const distinctId = `${prefix}-${i}`
      mapping.push({ teamId: 1, distinctId, personId: person, version: 1 })
      const view = (at: number, pathname: string): StoredEvent => ({
        uuid: crypto.randomUUID(), teamId: 1, event: '$pageview', distinctId, personId: person, createdAt: at, timestamp: at,
        properties: JSON.stringify({ $session_id: `${prefix}-s-${i}`, $pathname: pathname }),
      })
      events.push(view(start, path(i)))
      if (i % 3 === 0) events.push(view(start + 60_000, '/second'))
    }
    for (let i = 0; i < SESSIONS; i++) session(i, DAY + Math.floor((i * (DAY_MS - 120_000)) / SESSIONS), 'c')
    for (let i = 0; i < PREVIOUS; i++) session(i, DAY - DAY_MS + i * 1000, 'p')
    const started = performance.now()
    for (let i = 0; i < events.length; i += 20_000) await stack.services.events.insertBatch(events.slice(i, i + 20_000), { inDoubt: false })
    const duck = await accessDuckDb(join(stack.dataDir, 'events.duckdb'), { memoryMb: stack.config.EMBEDDED_DUCKDB_MEMORY_MB, threads: stack.config.EMBEDDED_DUCKDB_THREADS })
    await duck.upsertMapping(mapping)
    await duck.release()
    console.log(`[web] ${events.length} events of ${SESSIONS + PREVIOUS} sessions seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }, 300_000)
  afterAll(() => stack?.close())

  const post = async (query: Record<string, unknown>) => {
    const started = performance.now()
    const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query, refresh: 'force_blocking' } })
    const text = await r.text()
    const ms = performance.now() - started
    if (r.status !== 200) throw new Error(`${r.status}: ${text.slice(0, 500)}`)
    console.log(`[web] ${query.kind} ${query.breakdownBy ?? ''}: ${ms.toFixed(0)} ms, ${text.length} bytes`)
    return { body: JSON.parse(text), bytes: text.length, ms }
  }
  const RANGE = { date_from: '2024-05-10', date_to: '2024-05-10' }
  const bounce = (n: number, second: number) => ((n - second) / n) * 100

  test('overview against the day before', async () => {
    const { body } = await post({ kind: 'WebOverviewQuery', dateRange: RANGE, compareFilter: { compare: true } })
    const byKey = Object.fromEntries(body.results.map((r: { key: string; value: number; previous: number }) => [r.key, [r.value, r.previous]]))
    const seconds = (n: number) => Math.ceil(n / 3)
    expect(byKey.visitors).toEqual([SESSIONS, PREVIOUS])
    expect(byKey.sessions).toEqual([SESSIONS, PREVIOUS])
    expect(byKey.views).toEqual([SESSIONS + seconds(SESSIONS), PREVIOUS + seconds(PREVIOUS)])
    expect(byKey['bounce rate'][0]).toBeCloseTo(bounce(SESSIONS, seconds(SESSIONS)), 6)
  }, 120_000)

  test('pages, with the day before and entry bounce rates: ten rows of 55,000 pages, bounded in bytes', async () => {
    const { body, bytes } = await post({ kind: 'WebStatsTableQuery', breakdownBy: 'Page', dateRange: RANGE, includeBounceRate: true, compareFilter: { compare: true }, limit: 10 })
    // '/second' has the most views (every third session); then the ten shared pages, 5,000 sessions each
    const rows = body.results.map((r: unknown[]) => [r[0], r[1], r[2]])
    expect(rows[0]).toEqual(['/second', [Math.ceil(SESSIONS / 3), Math.ceil(PREVIOUS / 3)], [Math.ceil(SESSIONS / 3), Math.ceil(PREVIOUS / 3)]])
    expect(rows.slice(1).map((r: unknown[]) => r[0])).toEqual(Array.from({ length: 9 }, (_, k) => `/top/${k}`))
    expect(rows[1]).toEqual(['/top/0', [SESSIONS / 20, PREVIOUS / 20], [SESSIONS / 20, PREVIOUS / 20]])
    expect(body.hasMore).toBe(true)
    // the previous period and the entry bounce rates were read for the ten pages shown
    expect(body.hogql).toContain("IN ('/second', '/top/0'")
    expect(bytes).toBeLessThan(256 * 1024)
    const exits = await post({ kind: 'WebStatsTableQuery', breakdownBy: 'ExitPage', dateRange: RANGE, includeBounceRate: true, compareFilter: { compare: true }, limit: 10, offset: 5 })
    expect(exits.body.results.length).toBe(10)
    expect(exits.bytes).toBeLessThan(256 * 1024)
  }, 120_000)
})
