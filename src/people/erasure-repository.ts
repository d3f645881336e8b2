// The Postgres side of a person's erasure: the person row goes, and with it (by cascade) its distinct ids and
// static cohort memberships, and the personless rows its ids had before they were identified; serialised with the
// learners of every process by the project's advisory lock, and announced to every process's caches when the
// transaction commits.
import type { Sql } from 'postgres'
import { inTransaction } from '../db/postgres'
import { PERSONS_LOCK } from './repository'
import { notifyPersonChange } from './person-changes'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The distinct ids of a person of the project, or null when there is no such person. */
export async function personDistinctIds(sql: Sql, teamId: number, personUuid: string): Promise<string[] | null> {
  if (!UUID.test(personUuid)) return null
  const rows = await sql<{ distinct_id: string | null }[]>`
    select d.distinct_id
      from persons p left join person_distinct_ids d on d.person_id = p.id
     where p.team_id = ${teamId} and p.uuid = ${personUuid}`
  if (rows.length === 0) return null
  return rows.flatMap((r) => (r.distinct_id === null ? [] : [r.distinct_id]))
}

/** Delete the person; its distinct ids as they were at the deletion, or null when there was no such person. */
export async function deletePerson(sql: Sql, teamId: number, personUuid: string): Promise<string[] | null> {
  if (!UUID.test(personUuid)) return null
  return sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    await tx`select pg_advisory_xact_lock(${PERSONS_LOCK}, ${teamId})`
    const [person] = await tx<{ id: number }[]>`select id from persons where team_id = ${teamId} and uuid = ${personUuid} for update`
    if (!person) return null
    const ids = await tx<{ distinct_id: string }[]>`select distinct_id from person_distinct_ids where person_id = ${person.id}`
    const cohorts = (await tx<{ cohort_id: number }[]>`select cohort_id from cohort_people where person_id = ${person.id}`).map((r) => r.cohort_id)
    // distinct ids, static cohort memberships and flag hash-key overrides go with it (on delete cascade)
    await tx`delete from persons where id = ${person.id}`
    if (cohorts.length > 0) {
      // the static cohorts it was in count one member fewer
      await tx`
        update cohorts c set count = (select count(*) from cohort_people m where m.cohort_id = c.id)
         where c.is_static and c.id in (select jsonb_array_elements_text(${tx.json(cohorts)})::int)`
    }
    const distinctIds = ids.map((r) => r.distinct_id)
    // The personless rows its ids had before they were identified go too: the tombstones now outrank them, and an
    // id seen again with no person must get a new personless row, with a version above its tombstone's.
    if (distinctIds.length > 0) {
      await tx`delete from personless_distinct_ids where team_id = ${teamId} and distinct_id in (select jsonb_array_elements_text(${tx.json(distinctIds)}))`
    }
    await notifyPersonChange(tx, { teamId, distinctIds, groups: [], deleted: true })
    return distinctIds
  })
}
