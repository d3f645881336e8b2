// The target Postgres's record of a move (`embedded_moves`, one row): made when a move begins, finished when its
// counts matched. A service refuses to start on a Postgres whose move is not finished (services.ts), so that it never
// serves half-copied stores; the cursor lets the next run resume the events where the last one stopped. The first
// service to start on a finished move marks it served: from then on the targets are in use, and a move run again
// would overwrite what changed there with the old install's rows, so it is refused.
import type { Sql } from 'postgres'

export interface EventCursor {
  teamId: number
  timestamp: number
  uuid: string
}

export interface MoveRecord {
  source: string
  startedAt: Date
  finishedAt: Date | null
  servedAt: Date | null
  cursor: EventCursor | null
}

export const MOVE_COMMAND = 'npm run -s cli -- move --database-url URL --clickhouse-url URL --from DATA_DIR'

export class UnfinishedMove extends Error {
  constructor(record: MoveRecord) {
    super(
      `This Postgres holds a move from the embedded stores (${record.source}) that did not finish (started ${record.startedAt.toISOString()}): ` +
        `its data is incomplete, so phog will not start on it. Finish the move by running it again with the same targets: ${MOVE_COMMAND}`,
    )
  }
}

export class TargetInService extends Error {
  constructor(record: MoveRecord) {
    super(
      `The move into this Postgres finished (${record.finishedAt?.toISOString()}) and a service has run on it since (${record.servedAt?.toISOString()}): ` +
        'moving again would overwrite what changed there with the old install\'s rows. Move into a new Postgres database and ClickHouse database instead.',
    )
  }
}

async function ensureTable(sql: Sql): Promise<void> {
  await sql`create table if not exists embedded_moves (
    id integer primary key default 1 check (id = 1),
    source text not null,
    started_at timestamptz not null default now(),
    finished_at timestamptz,
    events_cursor jsonb,
    served_at timestamptz)`
}

/** The move recorded in this Postgres, if any (without creating the table). */
export async function moveRecord(sql: Sql): Promise<MoveRecord | null> {
  const [exists] = await sql<{ t: string | null }[]>`select to_regclass('public.embedded_moves')::text as t`
  if (!exists?.t) return null
  const [row] = await sql<{ source: string; started_at: Date; finished_at: Date | null; served_at: Date | null; events_cursor: EventCursor | null }[]>`
    select source, started_at, finished_at, served_at, events_cursor from embedded_moves where id = 1`
  return row ? { source: row.source, startedAt: row.started_at, finishedAt: row.finished_at, servedAt: row.served_at, cursor: row.events_cursor } : null
}

/** At a service's start: throws UnfinishedMove when a move into this Postgres was left half done, else marks a finished one served. */
export async function refuseUnfinishedMove(sql: Sql): Promise<void> {
  const record = await moveRecord(sql)
  if (!record) return
  if (record.finishedAt === null) throw new UnfinishedMove(record)
  if (record.servedAt === null) await sql`update embedded_moves set served_at = now() where id = 1 and served_at is null`
}

/** Mark the move as in progress (a new one, or the resumption of an unfinished one: its cursor is kept). */
export async function beginMove(sql: Sql, source: string): Promise<MoveRecord | null> {
  await ensureTable(sql)
  const previous = await moveRecord(sql)
  if (previous?.servedAt) throw new TargetInService(previous)
  const resuming = previous !== null && previous.finishedAt === null
  await sql`insert into embedded_moves (id, source, started_at, finished_at, events_cursor)
    values (1, ${source}, now(), null, null)
    on conflict (id) do update set source = excluded.source, finished_at = null,
      started_at = case when embedded_moves.finished_at is null then embedded_moves.started_at else now() end,
      events_cursor = case when embedded_moves.finished_at is null then embedded_moves.events_cursor else null end`
  return resuming ? previous : null
}

export async function saveCursor(sql: Sql, cursor: EventCursor): Promise<void> {
  await sql`update embedded_moves set events_cursor = ${JSON.stringify(cursor)}::text::jsonb where id = 1`
}

export async function finishMove(sql: Sql): Promise<void> {
  await sql`update embedded_moves set finished_at = now(), events_cursor = null where id = 1`
}
