// The issues API's reads on the current ClickHouse engine (chDB, in-process): `$exception` rows as the flush worker
// writes them (fingerprinted, with their issue), issues in a real Postgres, then the service's list and one issue
// counted through the query service (the modern dialect): occurrences, users, sessions, the daily volume, a merge
// followed by past events, and fingerprints with quotes inside their literals.
import { expect, test } from 'bun:test'
import { migratePostgres } from '../../src/db/migrate'
import { openDatabase } from '../../src/db/postgres'
import { fingerprintException, issueIdOf } from '../../src/error-tracking/fingerprint'
import { mergeIssues, recordSightings } from '../../src/error-tracking/repository'
import { ErrorTrackingService } from '../../src/error-tracking/service'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { sharedPostgres } from '../helpers/shared-servers'
import { tempDir } from '../helpers/temp'
import { event } from './event-store.contract'

describeWithChdb('error tracking reads on chDB (ClickHouse 26.7)', () => {
  test('issues counted from fingerprinted rows; a merge takes past events along', async () => {
    const url = chdbUrl(`errors_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    const db = await openDatabase({ databaseUrl: await (await sharedPostgres()).createDatabase(), dataDir: tempDir('phog-errors-chdb-'), poolMax: 2 })
    await migratePostgres(db.sql)
    const [{ id: orgId }] = await db.sql`insert into organizations (name) values ('o') returning id`
    const [{ id: teamId }] = await db.sql`insert into projects (organization_id, name, api_token_hash, api_token_mask) values (${orgId}, 'p', 'h', 'm') returning id`
    const now = Date.now()
    const exception = (distinctId: string, message: string, ms: number, extra: Record<string, unknown> = {}) => {
      const properties: Record<string, unknown> = {
        $session_id: `s-${distinctId}`,
        $exception_list: [{ type: 'TypeError', value: message, stacktrace: { type: 'raw', frames: [{ filename: 'https://a/app.js', function: 'f', lineno: 1, colno: 2, in_app: true }] } }],
        ...extra,
      }
      const p = fingerprintException(properties)
      const enriched = { ...properties, ...p, $exception_issue_id: issueIdOf(teamId, p.$exception_fingerprint) }
      return { row: event({ teamId, event: '$exception', distinctId, timestamp: now - ms, properties: JSON.stringify(enriched) }), fingerprint: p.$exception_fingerprint, message }
    }
    const rows = [
      exception('a', 'first', 60_000),
      exception('b', 'first', 120_000),
      exception('a', 'first', 2 * 86_400_000),
      exception('c', 'second', 60_000),
      exception('d', "it's quoted", 60_000, { $exception_fingerprint: "it's quoted') OR 1=1 --" }),
    ]
    await store.insertBatch(rows.map((r) => r.row), { inDoubt: false })
    await new ClickHouseMappingSink(chdbClient(), store.database).write(
      ['a', 'b', 'c', 'd'].map((d, i) => ({ teamId, distinctId: d, personId: `00000000-0000-4000-8000-00000000000${i}`, version: i + 1 })),
    )
    const byFingerprint = new Map<string, (typeof rows)[number]>()
    for (const r of rows) byFingerprint.set(r.fingerprint, r)
    await recordSightings(
      db.sql,
      teamId,
      [...byFingerprint.values()].map((r) => ({ fingerprint: r.fingerprint, name: 'TypeError', description: r.message, firstSeen: r.row.timestamp, lastSeen: r.row.timestamp, lastReceived: now })),
      100,
    )
    const query = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const service = new ErrorTrackingService({ sql: db.sql, query })
    const range = { dateFrom: now - 7 * 86_400_000, dateTo: now + 60_000 }
    const list = async () => (await service.list(teamId, { ...range, statuses: ['active', 'resolved'], orderBy: 'occurrences', limit: 10, offset: 0 }, 'http://x/')).results
    const first = (await list()).find((i) => i.description === 'first')!
    expect(first.aggregations).toMatchObject({ occurrences: 3, users: 2, sessions: 2 })
    expect(first.aggregations.volumeRange.slice(-3)).toEqual([1, 0, 2])
    expect((await list()).find((i) => i.description === "it's quoted")?.aggregations.occurrences).toBe(1)
    // merge "second" into "first": its past event is counted there at once
    const second = (await list()).find((i) => i.description === 'second')!
    await mergeIssues(db.sql, teamId, first.id, [second.id])
    const merged = await service.get(teamId, first.id, range, 10)
    expect(merged.aggregations).toMatchObject({ occurrences: 4, users: 3, sessions: 3 })
    expect(merged.events).toHaveLength(4)
    expect(merged.events[0]!.properties.$exception_list).toBeDefined()
    expect((await list()).map((i) => i.description).sort()).toEqual(['first', "it's quoted"])
    await db.close()
    await store.close()
  }, 120_000)
})
