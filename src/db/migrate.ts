// Numbered migrations in sql/postgres, applied in order, recorded, and serialised across processes by an
// advisory lock held for the whole transaction.
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Sql } from 'postgres'

export const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/postgres/', import.meta.url))

// An arbitrary constant shared by every process of this service ("phog" in ASCII).
const MIGRATION_LOCK = 0x70686f67

export interface Migration {
  version: string
  sql: string
}

export function readMigrations(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: f.replace(/\.sql$/, ''), sql: readFileSync(`${dir}/${f}`, 'utf8') }))
}

/** Apply every migration not yet recorded; returns the versions applied by this call. */
export async function migratePostgres(sql: Sql, dir = POSTGRES_MIGRATIONS_DIR): Promise<string[]> {
  const migrations = readMigrations(dir)
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`
    await tx`
      create table if not exists schema_migrations (
        version text primary key,
        applied_at timestamptz not null default now()
      )`
    const done = new Set((await tx<{ version: string }[]>`select version from schema_migrations`).map((r) => r.version))
    const applied: string[] = []
    for (const m of migrations) {
      if (done.has(m.version)) continue
      await tx.unsafe(m.sql).simple()
      await tx`insert into schema_migrations (version) values (${m.version})`
      applied.push(m.version)
    }
    return applied
  })
}
