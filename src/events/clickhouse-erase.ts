// Erasing a person's events from ClickHouse, by version: a lightweight DELETE (23.3 and newer: rows are
// hidden at once, removed at the next merge); before it, a mutation (ALTER TABLE … DELETE), which 18.16
// runs in the background without `mutations_sync`: it is waited for in system.mutations, bounded.
import type { ClickHouseClient } from '@clickhouse/client'
import { parseVersion, stringLiteral, type Dialect } from './dialect'

export interface EraseTarget {
  client: ClickHouseClient
  database: string
  /** the table holding the rows (events_local behind a Distributed table in a cluster) */
  storageTable: string
  cluster: string | undefined
  dialect: Dialect
}

/** Longest wait for a mutation on servers that cannot wait by themselves (18.16). */
const MUTATION_WAIT_MS = 60_000
/** ids per statement: a statement's text stays well under max_query_size (256 KiB) */
const IDS_PER_STATEMENT = 500

export type EraseMethod = 'lightweight_delete' | 'mutation_sync' | 'mutation_polled'

/** How this server erases rows: exported for its test. */
export function eraseMethod(version: string): EraseMethod {
  const v = parseVersion(version)
  if (v.major > 23 || (v.major === 23 && v.minor >= 3)) return 'lightweight_delete'
  // mutations_sync appeared in 19.x; 20.1 is the oldest server the modern dialect serves
  return v.major >= 20 ? 'mutation_sync' : 'mutation_polled'
}

export async function eraseDistinctIds(target: EraseTarget, teamId: number, distinctIds: string[]): Promise<void> {
  const method = eraseMethod(target.dialect.version)
  const table = `${target.database}.${target.storageTable}`
  const onCluster = target.cluster ? ` ON CLUSTER ${target.cluster}` : ''
  for (let i = 0; i < distinctIds.length; i += IDS_PER_STATEMENT) {
    const ids = distinctIds.slice(i, i + IDS_PER_STATEMENT).map(stringLiteral).join(', ')
    const where = `team_id = ${Math.trunc(teamId)} AND distinct_id IN (${ids})`
    if (method === 'lightweight_delete') {
      await target.client.command({ query: `DELETE FROM ${table}${onCluster} WHERE ${where}`, clickhouse_settings: { lightweight_deletes_sync: '2' } })
    } else if (method === 'mutation_sync') {
      await target.client.command({ query: `ALTER TABLE ${table}${onCluster} DELETE WHERE ${where}`, clickhouse_settings: { mutations_sync: '2' } })
    } else {
      await target.client.command({ query: `ALTER TABLE ${table}${onCluster} DELETE WHERE ${where}` })
      await waitForMutations(target)
    }
  }
}

async function waitForMutations(target: EraseTarget): Promise<void> {
  const deadline = Date.now() + MUTATION_WAIT_MS
  for (let pause = 20; ; pause = Math.min(500, pause * 2)) {
    const rs = await target.client.query({
      query: `SELECT count() AS n FROM system.mutations
               WHERE database = ${stringLiteral(target.database)} AND table = ${stringLiteral(target.storageTable)} AND is_done = 0`,
      format: 'JSONEachRow',
    })
    const [{ n }] = (await rs.json()) as { n: string | number }[]
    if (Number(n) === 0) return
    if (Date.now() > deadline) throw new Error(`the deletion is still running in ClickHouse after ${MUTATION_WAIT_MS / 1000} s; it will finish in the background`)
    await Bun.sleep(pause)
  }
}
