// Group types for admins: list, name, delete. Deleting frees the index (one anonymous event naming five junk
// types could otherwise take every slot for good) and what was learned under it, and blocks the name: the next
// anonymous event naming it would take the slot back. An admin lists blocked names and unblocks one. Flags read the mapping
// through their cache: every change bumps the project's flag version (`changedIn`, inside the transaction),
// so every process reloads it, and this one at once (`onChanged`).
import type { Sql } from 'postgres'
import { inTransaction } from '../db/postgres'
import { errors } from '../http/errors'
import { deleteGroupType, listBlockedGroupTypes, listGroupTypes, renameGroupType, unblockGroupType, type GroupTypeRow } from './group-types-repository'
import { PERSONS_LOCK } from './repository'

export interface GroupTypeNamesChange {
  group_type_index: number
  name_singular?: string | null
  name_plural?: string | null
}

const json = (r: GroupTypeRow) => ({ ...r, created_at: r.created_at.toISOString() })

export function parseGroupTypeIndex(raw: string): number {
  if (!/^[0-4]$/.test(raw)) throw errors.validation('invalid_input', 'A group type index is an integer from 0 to 4.', 'group_type_index')
  return Number(raw)
}

export class GroupTypeService {
  constructor(
    private readonly deps: {
      sql: Sql
      /** inside the write's transaction: tell the flag caches of every process */
      changedIn(tx: Sql, teamId: number): Promise<void>
      /** after the commit: this process's flag cache */
      onChanged(teamId: number): Promise<void>
    },
  ) {}

  async list(teamId: number) {
    return (await listGroupTypes(this.deps.sql, teamId)).map(json)
  }

  /** Names of several types at once (PostHog's update_metadata); all or none. */
  async rename(teamId: number, changes: GroupTypeNamesChange[]) {
    const renamed = await this.deps.sql.begin(async (transaction) => {
      const tx = inTransaction(transaction)
      const out = []
      for (const change of changes) {
        const row = await renameGroupType(tx, teamId, change.group_type_index, change)
        if (!row) throw errors.notFound(`No group type with index ${change.group_type_index}.`)
        out.push(json(row))
      }
      await this.deps.changedIn(tx, teamId)
      return out
    })
    await this.deps.onChanged(teamId)
    return renamed
  }

  async remove(teamId: number, index: number) {
    const removed = await this.deps.sql.begin(async (transaction) => {
      const tx = inTransaction(transaction)
      await tx`select pg_advisory_xact_lock(${PERSONS_LOCK}, ${teamId})`
      const deleted = await deleteGroupType(tx, teamId, index)
      if (!deleted) throw errors.notFound(`No group type with index ${index}.`)
      await this.deps.changedIn(tx, teamId)
      return { group_type: deleted.group_type, group_type_index: index, groups_deleted: deleted.groups, property_definitions_deleted: deleted.definitions, blocked: true as const }
    })
    await this.deps.onChanged(teamId)
    return removed
  }

  async listBlocked(teamId: number) {
    return (await listBlockedGroupTypes(this.deps.sql, teamId)).map((r) => ({ group_type: r.group_type, blocked_at: r.blocked_at.toISOString() }))
  }

  /** Events naming it may take a free slot again. */
  async unblock(teamId: number, groupType: string) {
    if (!(await unblockGroupType(this.deps.sql, teamId, groupType))) throw errors.notFound('No blocked group type with this name.')
    return { group_type: groupType, blocked: false as const }
  }
}
