// Keeps the distinct id → person mapping where the events are (ClickHouse's person_distinct_id, or the embedded
// event store's), so that queries resolve person_id with a join. Postgres stays the source: every row of
// person_distinct_ids carries a version from one sequence, taken whenever the learner writes it (a merge re-points
// every id of the merged person, so each gets a higher version). Within a project the learner writes under the
// project's advisory lock, so versions commit in order there: copying, per project, what is above the highest
// version already copied misses nothing. The first pass on an install that already holds persons is the backfill.
// An erased person's ids leave tombstones (versions too), copied as "belongs to nobody". An id seen with no person
// (personless_distinct_ids, versions from the same sequence) is copied as belonging to PostHog's deterministic uuid
// for it, the uuid its person would get: one person per anonymous visitor until an $identify or alias gives the id a
// person, whose row (a higher version) then re-points its past events.
import type { ClickHouseClient } from '@clickhouse/client'
import { Database } from 'bun:sqlite'
import type { Sql } from 'postgres'
import { accessDuckDb } from '../events/duckdb-access'
import { type DuckDbAccess, type DuckDbSettings, type MappingRow } from '../events/duckdb-database'
import { throttled, type Logger } from '../log'
import { personUuid } from '../people/identity'

export type { MappingRow }

export interface MappingSink {
  /** the highest version copied, per project */
  versions(): Promise<Map<number, number>>
  write(rows: MappingRow[]): Promise<void>
  close(): Promise<void>
}

const PAGE = 5000

export class PersonMappingCopy {
  private copied: Map<number, number> | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private running: Promise<number> | undefined
  private stopped = false
  /** a store that is down fails every turn: said once a minute, with how many turns failed meanwhile */
  private readonly logFailure = throttled(60_000)

  constructor(
    private readonly sql: Sql,
    private readonly sink: MappingSink,
    private readonly log: Logger,
  ) {}

  /** Copy everything changed since the last pass; returns how many rows were copied. */
  pass(): Promise<number> {
    this.running ??= this.copy().finally(() => (this.running = undefined))
    return this.running
  }

  private async copy(): Promise<number> {
    this.copied ??= await this.sink.versions()
    let total = 0
    for (;;) {
      const floor = Object.fromEntries(this.copied)
      const floorJson = this.sql.json(floor)
      // the rows written, the tombstones of erased ids and the personless ids, per project above what was copied, in
      // version order
      const rows = await this.sql<{ team_id: number; distinct_id: string; person_uuid: string | null; version: string; personless: boolean }[]>`
        select x.team_id, x.distinct_id, x.person_uuid, x.version, x.personless
          from projects pr
          cross join lateral (
            select * from (
              select d.team_id, d.distinct_id, p.uuid::text as person_uuid, d.version, false as personless
                from person_distinct_ids d
                join persons p on p.id = d.person_id
               where d.team_id = pr.id and d.version > coalesce((${floorJson}::jsonb ->> pr.id::text)::bigint, 0)
              union all
              select t.team_id, t.distinct_id, null, t.version, false
                from person_distinct_id_tombstones t
               where t.team_id = pr.id and t.version > coalesce((${floorJson}::jsonb ->> pr.id::text)::bigint, 0)
              union all
              select l.team_id, l.distinct_id, null, l.version, true
                from personless_distinct_ids l
               where l.team_id = pr.id and l.version > coalesce((${floorJson}::jsonb ->> pr.id::text)::bigint, 0)
            ) changes
            order by version
            limit ${PAGE}) x
         order by x.team_id, x.version`
      if (rows.length === 0) return total
      // (the uuid is computed here: Postgres has no SHA-1 without an extension)
      const batch = rows.map((r) => {
        const teamId = Number(r.team_id)
        return { teamId, distinctId: r.distinct_id, personId: r.personless ? personUuid(teamId, r.distinct_id) : r.person_uuid, version: Number(r.version) }
      })
      await this.sink.write(batch)
      for (const r of batch) this.copied.set(r.teamId, Math.max(this.copied.get(r.teamId) ?? 0, r.version))
      total += batch.length
      if (rows.length < PAGE) return total
    }
  }

  /** Copy every `intervalMs` until stopped (failures are logged and retried on the next turn). */
  start(intervalMs: number): void {
    const turn = async () => {
      try {
        await this.pass()
      } catch (error) {
        this.copied = undefined // read again from the store: a failed write may have landed in part
        this.logFailure('copy', (suppressed) => this.log.warn({ err: error, suppressed }, `person mapping copy failed (retried every ${intervalMs} ms): ${(error as Error)?.message ?? error}`))
      }
      if (!this.stopped) this.timer = setTimeout(turn, intervalMs)
    }
    this.timer = setTimeout(turn, 0)
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running?.catch(() => undefined)
    await this.sink.close()
  }
}

export class ClickHouseMappingSink implements MappingSink {
  constructor(
    private readonly client: ClickHouseClient,
    private readonly database: string,
  ) {}

  async versions(): Promise<Map<number, number>> {
    const rs = await this.client.query({
      query: `SELECT team_id, toString(max(version)) AS v FROM ${this.database}.person_distinct_id GROUP BY team_id`,
      format: 'JSONEachRow',
    })
    return new Map(((await rs.json()) as { team_id: string | number; v: string }[]).map((r) => [Number(r.team_id), Number(r.v)]))
  }

  async write(rows: MappingRow[]): Promise<void> {
    await this.client.insert({
      table: `${this.database}.person_distinct_id`,
      format: 'JSONEachRow',
      values: rows.map((r) => ({
        team_id: r.teamId,
        distinct_id: r.distinctId,
        person_id: r.personId ?? '00000000-0000-0000-0000-000000000000',
        is_deleted: r.personId === null ? 1 : 0,
        version: r.version,
      })),
    })
  }

  async close(): Promise<void> {}
}

export class SqliteMappingSink implements MappingSink {
  private db: Database | undefined

  constructor(private readonly file: string) {}

  private handle(): Database {
    if (!this.db) {
      this.db = new Database(this.file, { create: false })
      this.db.run('PRAGMA busy_timeout = 5000')
    }
    return this.db
  }

  async versions(): Promise<Map<number, number>> {
    const rows = this.handle().query('SELECT team_id, max(version) AS v FROM person_distinct_id GROUP BY team_id').all() as { team_id: number; v: number }[]
    return new Map(rows.map((r) => [r.team_id, r.v]))
  }

  async write(rows: MappingRow[]): Promise<void> {
    const db = this.handle()
    const upsert = db.prepare(
      `INSERT INTO person_distinct_id (team_id, distinct_id, person_id, version) VALUES (?, ?, ?, ?)
       ON CONFLICT (team_id, distinct_id) DO UPDATE SET person_id = excluded.person_id, version = excluded.version
       WHERE excluded.version > person_distinct_id.version`,
    )
    db.transaction(() => {
      for (const r of rows) upsert.run(r.teamId, r.distinctId, r.personId, r.version)
    })()
    upsert.finalize()
  }

  async close(): Promise<void> {
    this.db?.close()
    this.db = undefined
  }
}

/** The mapping in the embedded DuckDB store, written through its owner thread (duckdb-owner.ts). */
export class DuckDbMappingSink implements MappingSink {
  private access: Promise<DuckDbAccess> | undefined

  constructor(
    private readonly file: string,
    private readonly settings: DuckDbSettings,
  ) {}

  private db(): Promise<DuckDbAccess> {
    this.access ??= accessDuckDb(this.file, this.settings)
    const access = this.access
    access.catch(() => this.access === access && (this.access = undefined))
    return access
  }

  async versions(): Promise<Map<number, number>> {
    const rows = await (await this.db()).all('SELECT team_id, max(version) FROM person_distinct_id GROUP BY team_id')
    return new Map(rows.map(([team, version]) => [Number(team), Number(version)]))
  }

  async write(rows: MappingRow[]): Promise<void> {
    await (await this.db()).upsertMapping(rows)
  }

  async close(): Promise<void> {
    const access = this.access
    this.access = undefined
    await (await access?.catch(() => undefined))?.release()
  }
}
