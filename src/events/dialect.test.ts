import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { CLICKHOUSE_MIGRATIONS_DIR } from './clickhouse'
import { dialectFor, parseClickHouseDateTime, parseVersion, renderMigration, stringLiteral } from './dialect'

const eventsSql = readFileSync(`${CLICKHOUSE_MIGRATIONS_DIR}/0001_events.sql`, 'utf8')
const at = Date.UTC(2024, 2, 5, 7, 8, 9, 123) // 2024-03-05 07:08:09.123

describe('ClickHouse version detection', () => {
  test('18.16 is legacy, 20.x and later modern; dedup tokens from 22.2', () => {
    expect(dialectFor('18.16.1', 'db').name).toBe('legacy')
    expect(dialectFor('20.3.8.53', 'db').name).toBe('modern')
    expect(dialectFor('20.3.8.53', 'db').dedupToken).toBe(false)
    expect(dialectFor('22.2.1', 'db').dedupToken).toBe(true)
    expect(dialectFor('23.8.2.7', 'db').dedupToken).toBe(true)
    expect(parseVersion('24.3.1.2672')).toEqual({ major: 24, minor: 3 })
    expect(() => parseVersion('banana')).toThrow()
  })
})

describe('legacy dialect (18.16)', () => {
  const d = dialectFor('18.16.1', 'analytics')
  const [create] = renderMigration(eventsSql, d.templateVars(), false)

  test('uses only types 18.16 knows', () => {
    expect(create).toContain('CREATE TABLE IF NOT EXISTS analytics.events')
    expect(create).toContain("timestamp DateTime('UTC')")
    expect(create).toContain('event String')
    expect(create).toContain('ENGINE = ReplacingMergeTree(_inserted_at)')
    expect(create).toContain('ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(toString(uuid)))')
    for (const unsupported of ['DateTime64', 'LowCardinality', 'CODEC', 'SETTINGS', '{{']) expect(create).not.toContain(unsupported)
  })

  test('formats DateTime to the second, clamped to its range', () => {
    expect(d.formatDateTime(at)).toBe('2024-03-05 07:08:09')
    expect(d.formatDateTime(-5)).toBe('1970-01-01 00:00:01')
    expect(d.dateTimeLiteral(at)).toBe("toDateTime('2024-03-05 07:08:09', 'UTC')")
    expect(d.timestampPrecisionMs).toBe(1000)
  })
})

describe('modern dialect (23.8)', () => {
  const d = dialectFor('23.8.2.7', 'analytics')
  const [create] = renderMigration(eventsSql, d.templateVars(), false)

  test('uses DateTime64, LowCardinality, ZSTD and a deduplication window', () => {
    expect(create).toContain("timestamp DateTime64(6, 'UTC')")
    expect(create).toContain('event LowCardinality(String)')
    expect(create).toContain('properties String CODEC(ZSTD(3))')
    expect(create).toContain('_inserted_at DateTime64(6, \'UTC\') DEFAULT now64(6)')
    expect(create).toContain('SETTINGS non_replicated_deduplication_window = 1000')
    expect(create).toContain('ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))')
  })

  test('formats DateTime64 with microseconds', () => {
    expect(d.formatDateTime(at)).toBe('2024-03-05 07:08:09.123000')
    expect(d.dateTimeLiteral(at)).toBe("toDateTime64('2024-03-05 07:08:09.123000', 6, 'UTC')")
    expect(d.parseDateTime('2024-03-05 07:08:09.123456')).toBe(at)
    expect(d.timestampPrecisionMs).toBe(1)
  })
})

describe('cluster mode', () => {
  const d = dialectFor('23.8.2.7', 'analytics', 'prod')
  const statements = renderMigration(eventsSql, d.templateVars(), true)

  test('creates a replicated local table ON CLUSTER and a Distributed table over it', () => {
    expect(statements).toHaveLength(2)
    const [local, distributed] = statements
    expect(local).toContain('CREATE TABLE IF NOT EXISTS analytics.events_local ON CLUSTER prod')
    expect(local).toContain(
      "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/analytics.events_local', '{replica}', _inserted_at)",
    )
    expect(local).not.toContain('non_replicated_deduplication_window')
    expect(distributed).toBe(
      "CREATE TABLE IF NOT EXISTS analytics.events ON CLUSTER prod AS analytics.events_local\nENGINE = Distributed('prod', 'analytics', 'events_local', cityHash64(distinct_id))",
    )
  })

  test('single-node mode skips the cluster-only statement', () => {
    expect(renderMigration(eventsSql, dialectFor('23.8', 'a').templateVars(), false)).toHaveLength(1)
  })
})

describe('templates and literals', () => {
  test('an unknown template variable is an error, not SQL', () => {
    expect(() => renderMigration('CREATE TABLE {{nope}} (x UInt8);', {}, false)).toThrow('unknown variable {{nope}}')
  })

  test('string literals cannot be escaped out of', () => {
    expect(stringLiteral("it's")).toBe("'it\\'s'")
    expect(stringLiteral('back\\slash')).toBe("'back\\\\slash'")
    expect(stringLiteral("\\'; DROP TABLE events; --")).toBe("'\\\\\\'; DROP TABLE events; --'")
    expect(stringLiteral('nul\0byte')).toBe("'nul\\0byte'")
  })

  test('ClickHouse datetimes parse as UTC, with or without fractions', () => {
    expect(parseClickHouseDateTime('2024-03-05 07:08:09')).toBe(Date.UTC(2024, 2, 5, 7, 8, 9))
    expect(Number.isNaN(parseClickHouseDateTime('nonsense'))).toBe(true)
  })
})

describe('the DDL the service runs in cluster mode', () => {
  test('creates the database, migrations table and events tables ON CLUSTER, Replicated, behind a Distributed table', async () => {
    const { ClickHouseEventStore } = await import('./clickhouse')
    const store = new ClickHouseEventStore('http://default:@127.0.0.1:1/analytics', { cluster: 'prod' })
    // what init() would run, planned for a 23.8 server without connecting
    ;(store as unknown as { dialectValue: unknown }).dialectValue = dialectFor('23.8.2.7', 'analytics', 'prod')
    const ddl = store.plannedStatements()
    expect(ddl[0]).toBe('CREATE DATABASE IF NOT EXISTS analytics ON CLUSTER prod')
    expect(ddl[1]).toBe(
      "CREATE TABLE IF NOT EXISTS analytics.schema_migrations ON CLUSTER prod (version String, applied_at DateTime) ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/analytics.schema_migrations', '{shard}-{replica}') ORDER BY version",
    )
    expect(ddl[2]).toContain('CREATE TABLE IF NOT EXISTS analytics.events_local ON CLUSTER prod')
    expect(ddl[2]).toContain('ReplicatedReplacingMergeTree')
    expect(ddl[3]).toContain("ENGINE = Distributed('prod', 'analytics', 'events_local', cityHash64(distinct_id))")
    expect(ddl.every((s) => s.includes('ON CLUSTER prod'))).toBe(true)
    await store.close()
  })
})

describe('formatDateTime (the flush formats three values per row)', () => {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0')
  const viaDate = (ms: number, fraction: boolean) => {
    const d = new Date(ms)
    const base = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
    return fraction ? `${base}.${pad(d.getUTCMilliseconds(), 3)}000` : base
  }
  test('the same text as Date would give, at the edges of days and ranges and across many instants', () => {
    const legacy = dialectFor('18.16.1', 'db')
    const modern = dialectFor('26.7.1', 'db')
    const edges = [0, 999, 1000, 86_399_999, 86_400_000, Date.UTC(2024, 1, 29, 23, 59, 59, 999), 4294967295_000, Date.UTC(1900, 0, 1), Date.UTC(1969, 11, 31, 23, 59, 59, 1)]
    let seed = 42
    const next = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32
    const instants = [...edges, ...Array.from({ length: 20_000 }, () => Math.floor(Date.UTC(1900, 0, 1) + next() * (Date.UTC(2299, 0, 1) - Date.UTC(1900, 0, 1))))]
    for (const ms of instants) {
      expect(modern.formatDateTime(ms)).toBe(viaDate(ms, true))
      if (ms >= 1000 && ms <= 4294967295_000) expect(legacy.formatDateTime(ms)).toBe(viaDate(ms, false))
    }
  })

  test('writeDateTime writes the very bytes of formatDateTime for whole milliseconds, clamped ones included', () => {
    const out = new Uint8Array(64)
    const values = [0, -5, 1e18, -1e18, 86_399_999, Date.UTC(2299, 11, 31, 23, 59, 59, 999), Date.UTC(2100, 0, 1) - 1]
    for (let i = 0; i < 5000; i++) values.push(Math.floor(i * 987_654_321.7))
    for (const dialect of [dialectFor('18.16.1', 'db'), dialectFor('26.7.1', 'db')]) {
      for (const ms of values) {
        const end = dialect.writeDateTime(ms, out, 3)
        expect([ms, Buffer.from(out.subarray(3, end)).toString('latin1')]).toEqual([ms, dialect.formatDateTime(ms)])
      }
    }
  })
})
