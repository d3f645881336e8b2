// Postgres stops while exceptions are captured: the events are still stored, each with its fingerprint and the
// issue id derived from it (the store writer never waits for Postgres); when Postgres is back the issues are made
// from the log, and the API counts them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { issueIdOf } from '../../src/error-tracking/fingerprint'
import { startPostgres, type PostgresServer } from '../helpers/postgres-server'
import { json, startStack, type Stack } from '../helpers/stack'
import { exception, send, settled } from './error-tracking.contract'

describe('error tracking while Postgres is down', () => {
  let pg: PostgresServer
  let stack: Stack
  beforeAll(async () => {
    pg = await startPostgres()
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { DATABASE_URL: await pg.createDatabase(), EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 })
  })
  afterAll(async () => {
    await stack?.close()
    await pg?.destroy()
  })

  const stored = async (message: string) =>
    (await stack.services.query.run(1, `SELECT properties.$exception_fingerprint, properties.$exception_issue_id FROM events WHERE event = '$exception' AND distinct_id = ${`'down-${message}'`}`)).results

  test('events are stored with fingerprint and issue id while down; issues are made when it is back', async () => {
    const frames = [{ filename: 'https://a/app.js', function: 'f', lineno: 1, colno: 1, in_app: true }]
    await send(stack, [exception('down-before', 'Error', 'before', frames)])
    await settled(stack)
    await pg.stop()
    await send(stack, [exception('down-during', 'Error', 'during', frames), exception('down-during', 'Error', 'during', frames)])
    // the store writer goes on: both events land with their fingerprint and the derived issue id
    const deadline = Date.now() + 30_000
    let rows: unknown[][] = []
    while (Date.now() < deadline && (rows = await stored('during')).length < 2) await Bun.sleep(100)
    expect(rows).toHaveLength(2)
    const [fingerprint, issueId] = rows[0] as [string, string]
    expect(fingerprint).toMatch(/^[0-9a-f]{128}$/)
    expect(issueId).toBe(issueIdOf(1, fingerprint))
    expect(rows[1]).toEqual(rows[0]!)
    // the issues' consumer waits for Postgres (the log keeps the records)
    const stats = stack.services.captureLog.stats()
    expect(stats.consumers.errors!.position).toBeLessThan(stats.lastSeq)
    await pg.start()
    await settled(stack, 120_000)
    const one = await json(stack.api(`/api/projects/1/error_tracking/issues/${issueId}/`))
    expect(one).toMatchObject({ id: issueId, name: 'Error', description: 'during', status: 'active', aggregations: { occurrences: 2 } })
  }, 240_000)
})
