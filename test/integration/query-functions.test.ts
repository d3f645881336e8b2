// The HogQL functions (docs/query.md "Functions") through POST /api/projects/:id/query/ on the embedded DuckDB store,
// the embedded SQLite store and ClickHouse 18.16, the same events captured into each: every answer the one the
// contract worked out (the current engine, chDB: query-functions.chdb.test.ts).
import { expect } from 'bun:test'
import type { DialectName } from '../../src/query/dialect'
import { BASE, json, learned, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'
import { FUNCTIONS_EVENTS, queryFunctionsContract, type FunctionsTarget } from './query-functions.contract'

/** A stack with the contract's events captured and stored. */
async function captured(dialect: DialectName, start: () => Promise<Stack>): Promise<FunctionsTarget> {
  const stack = await start()
  const query = async (text: string) => {
    const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'HogQLQuery', query: text } } })
    return { status: r.status, body: await json(r) }
  }
  const batch = FUNCTIONS_EVENTS.map((e) => ({ event: e.event, timestamp: new Date(e.timestamp).toISOString(), properties: { distinct_id: e.distinctId, ...e.properties } }))
  const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))
  expect(r.status).toBe(200)
  await learned(stack)
  for (let i = 0; i < 200; i++) {
    const { body } = await query('SELECT count() FROM events')
    if (body.results?.[0]?.[0] === FUNCTIONS_EVENTS.length) break
    await Bun.sleep(50)
  }
  return { dialect, query, close: () => stack.close() }
}

queryFunctionsContract('embedded DuckDB store', () => captured('duckdb', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' })))
queryFunctionsContract('embedded SQLite store', () => captured('sqlite', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'sqlite' })))
queryFunctionsContract('ClickHouse 18.16', () => captured('clickhouse-legacy', () => startStack({ postgres: 'embedded', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 })))
