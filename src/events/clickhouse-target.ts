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
