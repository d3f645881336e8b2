// The metadata copy: every table of the embedded Postgres (PGlite) into the target Postgres, both migrated by the same
// migrations. Tables are read from the source's catalog, not listed here, so a table a new migration adds is moved
// without a change (test/integration/move.test.ts holds the list of the migrations' tables to that). Rows go in
// pages, in key order, upserted by primary key (a second run rewrites them, never doubles them), parents before
// children; identity values are kept (keys, flags and dashboards keep their ids) and every sequence is set past the
// source's.
import type { Sql } from 'postgres'

/** Tables that are not the data: the migrations' own bookkeeping (the target has its own) and the move's marker. */
const NOT_MOVED = new Set(['schema_migrations', 'embedded_moves'])
/** Rows per statement; a row's JSON is bounded by what the API accepted, pages by this many rows. */
const PAGE_ROWS = 500

export interface TableShape {
  name: string
  primaryKey: string[]
  /** columns written (generated ones are computed by the target) */
  columns: string[]
  parents: string[]
  /** the column naming the project, when the table has one */
  projectColumn: string | null
}

export interface TableCount {
  table: string
  source: number
  target: number
  bySourceProject: Record<string, number>
  byTargetProject: Record<string, number>
}

/** Every table of the source's public schema with what the copy needs, parents first. */
export async function tableShapes(sql: Sql): Promise<TableShape[]> {
  const rows = await sql<{ name: string; pk: string[] | null; columns: string[]; parents: string[] | null }[]>`
    select c.relname as name,
      (select array_agg(a.attname::text order by k.ord) from pg_index i
         cross join unnest(i.indkey) with ordinality k(attnum, ord)
         join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
        where i.indrelid = c.oid and i.indisprimary) as pk,
      (select array_agg(a.attname::text order by a.attnum) from pg_attribute a
        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = '') as columns,
      (select array_agg(distinct p.relname::text) from pg_constraint f join pg_class p on p.oid = f.confrelid
        where f.conrelid = c.oid and f.contype = 'f' and f.confrelid <> c.oid) as parents
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p')
    order by c.relname`
  const shapes = rows
    .filter((r) => !NOT_MOVED.has(r.name))
    .map((r): TableShape => {
      if (!r.pk?.length) throw new Error(`table ${r.name} has no primary key: the move upserts by it`)
      const projectColumn = r.name === 'projects' ? 'id' : (['team_id', 'project_id'].find((c) => r.columns.includes(c)) ?? null)
      return { name: r.name, primaryKey: r.pk, columns: r.columns, parents: r.parents ?? [], projectColumn }
    })
  return parentsFirst(shapes)
}

/** Topological order by foreign keys (a table's own references aside; a cycle keeps the rest in name order). */
export function parentsFirst(shapes: TableShape[]): TableShape[] {
  const byName = new Map(shapes.map((s) => [s.name, s]))
  const ordered: TableShape[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (shape: TableShape) => {
    if (state.has(shape.name)) return
    state.set(shape.name, 'visiting')
    for (const parent of shape.parents) {
      const p = byName.get(parent)
      if (p) visit(p)
    }
    state.set(shape.name, 'done')
    ordered.push(shape)
  }
  for (const shape of shapes) visit(shape)
  return ordered
}

/**
 * Copy one table, a page at a time in primary-key order; returns the rows read. Rows travel as JSON text
 * (`to_jsonb`, back by `jsonb_populate_recordset`), so every type keeps its exact value (big integers, numerics,
 * bytea, timestamps) without passing through JavaScript numbers.
 */
export async function copyTable(source: Sql, target: Sql, shape: TableShape, onPage: (rows: number) => void): Promise<number> {
  const table = source(shape.name)
  const key = source(shape.primaryKey)
  const columns = shape.columns
  const others = columns.filter((c) => !shape.primaryKey.includes(c))
  let last: string | null = null
  let total = 0
  for (;;) {
    const page: { r: string }[] = last === null
      ? await source`select to_jsonb(t)::text as r from ${table} t order by ${key} limit ${PAGE_ROWS}`
      : await source`select to_jsonb(t)::text as r from ${table} t
          where (${key}) > (select ${key} from jsonb_populate_record(null::${table}, ${last}::text::jsonb))
          order by ${key} limit ${PAGE_ROWS}`
    if (page.length === 0) return total
    const json = `[${page.map((p) => p.r).join(',')}]`
    const into = target(shape.name)
    const cols = target(columns)
    if (others.length === 0) {
      await target`insert into ${into} (${cols}) overriding system value
        select ${cols} from jsonb_populate_recordset(null::${into}, ${json}::text::jsonb)
        on conflict (${target(shape.primaryKey)}) do nothing`
    } else {
      const updates = others.map((c) => target`${target(c)} = excluded.${target(c)}`)
      const set = updates.reduce((all, u) => target`${all}, ${u}`)
      await target`insert into ${into} (${cols}) overriding system value
        select ${cols} from jsonb_populate_recordset(null::${into}, ${json}::text::jsonb)
        on conflict (${target(shape.primaryKey)}) do update set ${set}`
    }
    total += page.length
    onPage(page.length)
    last = page[page.length - 1].r
  }
}

/** Every sequence of the target set at least as far as the source's (ids and versions never reused). */
export async function alignSequences(source: Sql, target: Sql): Promise<string[]> {
  const sequences = await source<{ name: string; last: string | null }[]>`
    select sequencename as name, last_value::text as last from pg_sequences where schemaname = 'public'`
  const aligned: string[] = []
  for (const { name, last } of sequences) {
    if (last === null) continue // never used
    const [exists] = await target`select 1 from pg_sequences where schemaname = 'public' and sequencename = ${name}`
    if (!exists) continue
    await target`select setval(${`public.${name}`}::regclass, greatest(${last}::bigint,
      (select coalesce(last_value, 0) from pg_sequences where schemaname = 'public' and sequencename = ${name})))`
    aligned.push(name)
  }
  return aligned
}

async function countsOf(sql: Sql, shape: TableShape): Promise<{ total: number; byProject: Record<string, number> }> {
  const table = sql(shape.name)
  const [{ n }] = await sql<{ n: string }[]>`select count(*)::text as n from ${table}`
  const byProject: Record<string, number> = {}
  if (shape.projectColumn) {
    const column = sql(shape.projectColumn)
    for (const r of await sql<{ p: string; n: string }[]>`select ${column}::text as p, count(*)::text as n from ${table} group by 1`) {
      byProject[r.p] = Number(r.n)
    }
  }
  return { total: Number(n), byProject }
}

/** Rows per table and per project, on both sides. */
export async function compareCounts(source: Sql, target: Sql, shapes: TableShape[]): Promise<TableCount[]> {
  const out: TableCount[] = []
  for (const shape of shapes) {
    const [s, t] = [await countsOf(source, shape), await countsOf(target, shape)]
    out.push({ table: shape.name, source: s.total, target: t.total, bySourceProject: s.byProject, byTargetProject: t.byProject })
  }
  return out
}
