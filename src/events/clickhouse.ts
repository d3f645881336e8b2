// The ClickHouse event store (@clickhouse/client over HTTP).
import { ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client'
import { readdirSync, readFileSync } from 'node:fs'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { eraseDistinctIds } from './clickhouse-erase'
import { ROW_COLUMNS, rowsAsTabSeparated } from './clickhouse-rows'
import { dialectFor, renderMigration, stringLiteral, type Dialect } from './dialect'
import { valueWithin } from '../lib/timeout'
import { classify, errorCode, UNKNOWN_DATABASE, UNKNOWN_TABLE } from './clickhouse-errors'
import { parseClickHouseUrl, replicaChoice, type ClickHouseTarget } from './clickhouse-target'
import { StoreError, type EventQuery, type EventStore, type InsertOptions, type StoredEvent } from './store'
import { refuseNewerSchema } from '../db/migrate'

export const CLICKHOUSE_MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/clickhouse/', import.meta.url))

/**
 * The insert's deduplication token, derived from the rows' uuids: a retry of the same rows carries the same
 * token, while different rows never share one, whichever node, process or log sent them. (A token built from a
 * log's record numbers would collide between processes and after a log is recreated, and ClickHouse would
 * silently drop the second block.)
 */
export function deduplicationToken(rows: readonly StoredEvent[]): string {
  const hasher = new Bun.CryptoHasher('sha256')
  for (const row of rows) hasher.update(row.uuid)
  return `${rows.length}-${hasher.digest('hex').slice(0, 40)}`
}

/**
 * The `_inserted_at` of a batch's rows: derived from the rows (when the newest of them was received), never from
 * the clock of the attempt, so that a retry sends the very same bytes and ClickHouse's block deduplication (by
 * content on 18.16 and Replicated tables, by token from 22.2) recognises a block it already has.
 */
export function batchInsertedAt(rows: readonly StoredEvent[]): number {
  let newest = 0
  for (const row of rows) newest = Math.max(newest, row.createdAt)
  return newest
}

/**
 * Whether the server takes these rows as a single insert block. A token is deduplicated per block (a large insert
 * cut into blocks gets token_0, token_1, …): a retry that left rows out, cut differently, could reuse the number of
 * a block that landed and be dropped for it. Servers cut at about a million rows or, when squashing, 256 MB; this
 * stays far below (characters, not bytes, are counted here).
 */
function surelyOneBlock(rows: readonly StoredEvent[]): boolean {
  if (rows.length > 100_000) return false
  let chars = 0
  for (const row of rows) chars += row.properties.length + row.distinctId.length + row.event.length + 200
  return chars < 64 * 1024 * 1024
}

interface Row {
  uuid_text: string
  team_id: string | number
  event: string
  distinct_id: string
  properties: string
  timestamp_text: string
  created_text: string
  person_text: string | null
}

export interface ClickHouseStoreOptions {
  /** CLICKHOUSE_CLUSTER: Replicated tables ON CLUSTER behind a Distributed table */
  cluster?: string
  /** a client to use instead of one made from the URL (the store then leaves closing it to its owner) */
  client?: ClickHouseClient
  migrationsDir?: string
}

export class ClickHouseEventStore implements EventStore {
  readonly kind = 'clickhouse' as const
  private readonly client: ClickHouseClient
  private readonly ownsClient: boolean
  private readonly target: ClickHouseTarget
  private readonly cluster: string | undefined
  private readonly migrationsDir: string
  private dialectValue: Dialect | undefined

  /** `url` names the server and the database (http://user:pass@host:8123/database). */
  constructor(url: string, options: ClickHouseStoreOptions = {}) {
    this.target = parseClickHouseUrl(url)
    this.cluster = options.cluster
    this.migrationsDir = options.migrationsDir ?? CLICKHOUSE_MIGRATIONS_DIR
    this.ownsClient = !options.client
    this.client =
      options.client ??
      createClient({
        url: this.target.url,
        username: this.target.username,
        password: this.target.password,
        request_timeout: 30_000,
        max_open_connections: 4,
        compression: { request: false, response: false },
        // Failures are classified and logged by the pipeline; the client's own console logging would duplicate them.
        log: { level: ClickHouseLogLevel.OFF },
      })
  }

  get dialect(): Dialect {
    if (!this.dialectValue) throw new StoreError('clickhouse store not initialised', true)
    return this.dialectValue
  }

  get timestampPrecisionMs(): number {
    return this.dialectValue?.timestampPrecisionMs ?? 1
  }

  get database(): string {
    return this.target.database
  }

  /** The table the service writes to and reads from (Distributed in cluster mode). */
  private get table(): string {
    return `${this.target.database}.events`
  }

  async init(): Promise<void> {
    try {
      const rs = await this.client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' })
      const [{ v }] = (await rs.json()) as { v: string }[]
      this.dialectValue = dialectFor(v, this.target.database, this.cluster)
      await this.migrate()
    } catch (error) {
      throw classify(error, 'init')
    }
  }

  /** The DDL the migrations produce for this server (for tests and `cli migrate --print`). */
  plannedStatements(): string[] {
    const vars = this.dialect.templateVars()
    const onCluster = vars.on_cluster
    const out = [
      `CREATE DATABASE IF NOT EXISTS ${this.target.database} ${onCluster}`.trim(),
      `CREATE TABLE IF NOT EXISTS ${this.target.database}.schema_migrations ${onCluster} (version String, applied_at DateTime) ENGINE = ${vars['MergeTree(schema_migrations)']} ORDER BY version`,
    ]
    for (const m of this.migrationFiles()) out.push(...renderMigration(m.sql, vars, Boolean(this.cluster)))
    return out
  }

  private migrationFiles(): { version: string; sql: string }[] {
    return readdirSync(this.migrationsDir)
      .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
      .sort()
      .map((f) => ({ version: f.replace(/\.sql$/, ''), sql: readFileSync(`${this.migrationsDir}/${f}`, 'utf8') }))
  }

  /**
   * Apply the pending migrations. What is applied is read first, from this node alone: a node whose schema is
   * current runs no DDL at all, so it starts while other hosts of its cluster are down (an ON CLUSTER statement
   * waits for every host). Only a pending migration runs DDL, and then every host must be up.
   */
  private async migrate(): Promise<void> {
    const files = this.migrationFiles()
    let applied = await this.appliedVersions()
    refuseNewerSchema('event store (ClickHouse)', applied, files.map((m) => m.version))
    if (files.every((m) => applied.has(m.version))) return
    const [createDb, createMigrations] = this.plannedStatements()
    await this.client.command({ query: createDb })
    await this.client.command({ query: createMigrations })
    applied = await this.appliedVersions() // another process may have migrated meanwhile
    const vars = this.dialect.templateVars()
    for (const m of files) {
      if (applied.has(m.version)) continue
      // Every statement is IF NOT EXISTS, so two processes migrating at once converge.
      for (const statement of renderMigration(m.sql, vars, Boolean(this.cluster))) {
        await this.client.command({ query: statement })
      }
      await this.client.insert({
        table: `${this.target.database}.schema_migrations`,
        values: [{ version: m.version, applied_at: this.dialect.formatDateTime(Date.now()).slice(0, 19) }],
        format: 'JSONEachRow',
      })
    }
  }

  /** The migrations this node knows to be applied (none when it has no database or no migrations table yet). */
  private async appliedVersions(): Promise<Set<string>> {
    try {
      const rs = await this.client.query({
        query: `SELECT version FROM ${this.target.database}.schema_migrations`,
        format: 'JSONEachRow',
      })
      return new Set(((await rs.json()) as { version: string }[]).map((r) => r.version))
    } catch (error) {
      if ([UNKNOWN_TABLE, UNKNOWN_DATABASE].includes(errorCode(error))) return new Set()
      throw error
    }
  }

  /**
   * A retry is the same block as the first attempt: the same rows in the same order with the same bytes, and from
   * 22.2 the same deduplication token, so the server drops whatever part of it had landed. When in doubt, the rows
   * already visible are left out first; the token still names the whole batch (the server keeps a token per
   * partition, so the rows left are dropped only where this very batch already landed them; a batch the server
   * might cut into several blocks goes without it), and on servers that deduplicate by content, what is left of a
   * part that landed is that same part, byte for byte. The check alone is not enough in a cluster: it reads each
   * shard from one replica, which may not have fetched the rows yet.
   */
  async insertBatch(rows: StoredEvent[], options: InsertOptions): Promise<number> {
    if (rows.length === 0) return 0
    const d = this.dialect
    let pending = rows
    try {
      if (options.inDoubt) {
        const landed = await this.existingUuids(rows)
        pending = rows.filter((r) => !landed.has(r.uuid))
        if (pending.length === 0) return 0
      }
      const settings: ClickHouseSettings = {}
      if (d.dedupToken && (pending.length === rows.length || surelyOneBlock(rows))) {
        settings.insert_deduplication_token = deduplicationToken(rows)
      }
      if (this.cluster) Object.assign(settings, { insert_distributed_sync: 1 }, replicaChoice(this.cluster))
      // _inserted_at is sent explicitly (derived from the batch, so a retry sends the same bytes).
      const insertedAt = d.formatDateTime(batchInsertedAt(rows))
      await this.client.insert({
        table: this.table,
        format: 'TabSeparated',
        columns: [...ROW_COLUMNS],
        values: Readable.from([rowsAsTabSeparated(pending, d, insertedAt)], { objectMode: false }),
        clickhouse_settings: settings,
      })
      return pending.length
    } catch (error) {
      throw classify(error, 'insert')
    }
  }

  /** Which of these rows are already stored (used when a previous attempt may have landed). */
  private async existingUuids(rows: StoredEvent[]): Promise<Set<string>> {
    const found = new Set<string>()
    const byTeam = new Map<number, StoredEvent[]>()
    for (const r of rows) {
      const list = byTeam.get(r.teamId)
      if (list) list.push(r)
      else byTeam.set(r.teamId, [r])
    }
    for (const [teamId, list] of byTeam) {
      for (let i = 0; i < list.length; i += 5000) {
        const chunk = list.slice(i, i + 5000)
        let lo = Infinity
        let hi = -Infinity
        for (const r of chunk) {
          lo = Math.min(lo, r.timestamp)
          hi = Math.max(hi, r.timestamp)
        }
        const rs = await this.client.query({
          query: `SELECT DISTINCT toString(uuid) AS uuid_text FROM ${this.table}
                  WHERE team_id = ${teamId}
                    AND timestamp >= ${this.dialect.dateTimeLiteral(lo - 1000)}
                    AND timestamp <= ${this.dialect.dateTimeLiteral(hi + 1000)}
                    AND toString(uuid) IN (${chunk.map((r) => stringLiteral(r.uuid)).join(',')})`,
          format: 'JSONEachRow',
          clickhouse_settings: replicaChoice(this.cluster),
        })
        for (const r of (await rs.json()) as { uuid_text: string }[]) found.add(r.uuid_text)
      }
    }
    return found
  }

  /** The events API's filter and cursor as a WHERE clause. */
  private whereOf(q: EventQuery): string[] {
    const d = this.dialect
    const where = [`team_id = ${Math.trunc(q.teamId)}`]
    if (q.event !== undefined) where.push(`event = ${stringLiteral(q.event)}`)
    if (q.distinctId !== undefined) where.push(`distinct_id = ${stringLiteral(q.distinctId)}`)
    if (q.after !== undefined) where.push(`timestamp >= ${d.dateTimeLiteral(q.after)}`)
    if (q.before !== undefined) where.push(`timestamp < ${d.dateTimeLiteral(q.before)}`)
    if (q.cursor) {
      const ts = d.dateTimeLiteral(q.cursor.timestamp)
      where.push(`(timestamp < ${ts} OR (timestamp = ${ts} AND toString(uuid) < ${stringLiteral(q.cursor.uuid)}))`)
    }
    return where
  }

  async rowSizes(q: EventQuery): Promise<number[]> {
    try {
      const rs = await this.client.query({
        query: `SELECT length(event) + length(distinct_id) + length(properties) AS size
                FROM ${this.table}
                WHERE ${this.whereOf(q).join(' AND ')}
                ORDER BY timestamp DESC, toString(uuid) DESC
                LIMIT ${Math.max(1, Math.trunc(q.limit))}`,
        format: 'JSONEachRow',
        clickhouse_settings: replicaChoice(this.cluster),
      })
      return ((await rs.json()) as { size: string | number }[]).map((r) => Number(r.size))
    } catch (error) {
      throw classify(error, 'query')
    }
  }

  async query(q: EventQuery): Promise<StoredEvent[]> {
    const d = this.dialect
    const where = this.whereOf(q)
    try {
      const rs = await this.client.query({
        // Aliases differ from column names: ClickHouse lets an alias shadow its column in WHERE.
        query: `SELECT toString(uuid) AS uuid_text, team_id, event, distinct_id, properties,
                       toString(timestamp) AS timestamp_text, toString(created_at) AS created_text,
                       if(isNull(person_id), NULL, toString(person_id)) AS person_text
                FROM ${this.table}
                WHERE ${where.join(' AND ')}
                ORDER BY timestamp DESC, toString(uuid) DESC
                LIMIT ${Math.max(1, Math.trunc(q.limit))}`,
        format: 'JSONEachRow',
        clickhouse_settings: replicaChoice(this.cluster),
      })
      const rows = (await rs.json()) as Row[]
      return rows.map((r) => ({
        uuid: r.uuid_text,
        teamId: Number(r.team_id),
        event: r.event,
        distinctId: r.distinct_id,
        properties: r.properties,
        timestamp: d.parseDateTime(r.timestamp_text),
        createdAt: d.parseDateTime(r.created_text),
        personId: r.person_text,
      }))
    } catch (error) {
      throw classify(error, 'query')
    }
  }

  async countByUuid(teamId: number, uuids: string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>()
    for (let i = 0; i < uuids.length; i += 5000) {
      const chunk = uuids.slice(i, i + 5000)
      const rs = await this.client.query({
        query: `SELECT toString(uuid) AS uuid_text, count() AS n FROM ${this.table}
                WHERE team_id = ${Math.trunc(teamId)} AND toString(uuid) IN (${chunk.map(stringLiteral).join(',')})
                GROUP BY uuid_text`,
        format: 'JSONEachRow',
        clickhouse_settings: replicaChoice(this.cluster),
      })
      for (const r of (await rs.json()) as { uuid_text: string; n: string | number }[]) counts.set(r.uuid_text, Number(r.n))
    }
    return counts
  }

  /** A person's erasure (clickhouse-erase.ts): done, for readers, when it returns. */
  async deleteEvents(teamId: number, distinctIds: string[]): Promise<void> {
    if (distinctIds.length === 0) return
    const storageTable = this.cluster ? 'events_local' : 'events'
    try {
      await eraseDistinctIds({ client: this.client, database: this.target.database, storageTable, cluster: this.cluster, dialect: this.dialect }, teamId, distinctIds)
    } catch (error) {
      throw classify(error, 'delete')
    }
  }

  async health(): Promise<boolean> {
    return (await valueWithin(this.client.ping(), 1000, { success: false as const, error: new Error('ping timed out') })).success
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close()
  }
}
