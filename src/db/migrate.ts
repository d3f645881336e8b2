// Numbered migrations in sql/postgres, applied in order, recorded, and serialised across processes by an
// advisory lock held for the whole transaction.
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Sql } from 'postgres'

export const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/postgres/', import.meta.url))

// An arbitrary constant shared by every process of this service ("phog" in ASCII).
const MIGRATION_LOCK = 0x70686f67

/**
 * A store migrated by a newer phog: it holds migrations this release does not know, so its schema may have changed
 * under this code (a renamed column, a new constraint). Starting on it could write what the newer release cannot
 * read; the service refuses, and says how to go on.
 */
export class NewerSchemaError extends Error {
  constructor(
    readonly store: string,
    readonly unknown: string[],
  ) {
    super(
      `the ${store} was migrated by a newer phog: it holds migration${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ', …' : ''} that this release does not know. Start the release that wrote it (or a later one), or restore a backup made by this release (docs/operations.md#upgrades)`,
    )
  }
}

/** Throw NewerSchemaError when `applied` names a migration `known` lacks. */
export function refuseNewerSchema(store: string, applied: Iterable<string>, known: Iterable<string>): void {
  const knownSet = new Set(known)
  const unknown = [...applied].filter((v) => !knownSet.has(v)).sort()
  if (unknown.length > 0) throw new NewerSchemaError(store, unknown)
}

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
    refuseNewerSchema('metadata store (Postgres)', done, migrations.map((m) => m.version))
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
