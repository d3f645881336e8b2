// A ClickHouse URL as the service is configured with it.

export interface ClickHouseTarget {
  url: string
  username: string
  password: string
  database: string
}

/** http://user:pass@host:8123/database → its parts (database "default" when the path is empty). */
export function parseClickHouseUrl(raw: string): ClickHouseTarget {
  const u = new URL(raw)
  const database = decodeURIComponent(u.pathname.replace(/^\/+|\/+$/g, '')) || 'default'
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) throw new Error(`invalid ClickHouse database name "${database}"`)
  return {
    url: `${u.protocol}//${u.host}`,
    username: decodeURIComponent(u.username) || 'default',
    password: decodeURIComponent(u.password),
    database,
  }
}

/**
 * In a cluster, every read and write picks each shard's replicas in the configured order, so both reach the same
 * replica while it is up: rows are readable as soon as their write is acknowledged, and two reads of one answer (a
 * count, then the page) see the same rows. With ClickHouse's default (a random replica), a read could reach the
 * replica the rows had not been copied to yet. A replica that fails is passed over for the next in order.
 */
export function replicaChoice(cluster: string | undefined): { load_balancing?: 'in_order' } {
  return cluster ? { load_balancing: 'in_order' } : {}
}
