// What the manifest counts in the metadata store, and what a restore removes from it (sessions).
import type { Sql } from 'postgres'

/** Tables counted per project (their `team_id`), as the manifest names them. */
const PER_PROJECT: Readonly<Record<string, string>> = {
  persons: 'persons',
  feature_flags: 'feature_flags',
  cohorts: 'cohorts',
  insights: 'insights',
  dashboards: 'dashboards',
}

export interface MetadataCounts {
  counts: Record<string, number>
  byProject: Record<string, Record<string, number>>
}

/** Every count in one read-only snapshot (a repeatable-read transaction). */
export async function countMetadata(sql: Sql): Promise<MetadataCounts> {
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    const counts: Record<string, number> = {}
    const byProject: Record<string, Record<string, number>> = {}
    for (const [name, table] of Object.entries(PER_PROJECT)) {
      const rows = await tx<{ team_id: number; n: number }[]>`select team_id, count(*)::int as n from ${tx(table)} group by team_id`
      counts[name] = 0
      for (const r of rows) {
        counts[name] += r.n
        ;(byProject[String(r.team_id)] ??= {})[name] = r.n
      }
    }
    const [{ n: keys }] = await tx<{ n: number }[]>`select count(*)::int as n from personal_api_keys`
    const [{ n: projects }] = await tx<{ n: number }[]>`select count(*)::int as n from projects`
    const [{ n: users }] = await tx<{ n: number }[]>`select count(*)::int as n from users`
    Object.assign(counts, { personal_api_keys: keys, projects, users })
    return { counts, byProject }
  })
}

export async function appliedMigrations(sql: Sql): Promise<string[]> {
  const rows = await sql<{ version: string }[]>`select version from schema_migrations order by version`
  return rows.map((r) => r.version)
}

/** Sign-in sessions do not survive a restore: who signed in on the old install signs in again. */
export async function deleteSessions(sql: Sql): Promise<number> {
  const result = await sql`delete from user_sessions`
  return result.count
}

/** An owner of the instance's first organization (the one its first start created). */
export async function isInstanceOwner(sql: Sql, userId: number): Promise<boolean> {
  const rows = await sql`
    select 1 from organization_members m
    where m.user_id = ${userId} and m.level = 15
      and m.organization_id = (select id from organizations order by created_at, id limit 1)`
  return rows.length > 0
}
