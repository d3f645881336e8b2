// The target Postgres's record of a move (`embedded_moves`, one row): made when a move begins, finished when its
// counts matched. A service refuses to start on a Postgres whose move is not finished (services.ts), so that it never
// serves half-copied stores; the cursor lets the next run resume the events where the last one stopped.
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

async function ensureTable(sql: Sql): Promise<void> {
  await sql`create table if not exists embedded_moves (
    id integer primary key default 1 check (id = 1),
    source text not null,
    started_at timestamptz not null default now(),
    finished_at timestamptz,
    events_cursor jsonb)`
}

/** The move recorded in this Postgres, if any (without creating the table). */
export async function moveRecord(sql: Sql): Promise<MoveRecord | null> {
  const [exists] = await sql<{ t: string | null }[]>`select to_regclass('public.embedded_moves')::text as t`
  if (!exists?.t) return null
  const [row] = await sql<{ source: string; started_at: Date; finished_at: Date | null; events_cursor: EventCursor | null }[]>`
    select source, started_at, finished_at, events_cursor from embedded_moves where id = 1`
  return row ? { source: row.source, startedAt: row.started_at, finishedAt: row.finished_at, cursor: row.events_cursor } : null
}

/** The start refusal: throws UnfinishedMove when a move into this Postgres was left half done. */
export async function refuseUnfinishedMove(sql: Sql): Promise<void> {
  const record = await moveRecord(sql)
  if (record && record.finishedAt === null) throw new UnfinishedMove(record)
}

/** Mark the move as in progress (a new one, or the resumption of an unfinished one: its cursor is kept). */
export async function beginMove(sql: Sql, source: string): Promise<MoveRecord | null> {
  await ensureTable(sql)
  const previous = await moveRecord(sql)
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
