// The service as a user starts it, on fresh stores, with helpers to read what it stored.
import { freshEnv, PERSONAL_KEY, PROJECT_KEY, type StoreChoice } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'

export { PERSONAL_KEY, PROJECT_KEY }

export interface E2EService extends ServiceProcess {
  api<T = any>(path: string, init?: RequestInit & { json?: unknown }): Promise<{ status: number; body: T }>
  /** events of a distinct id, waiting until at least `count` are stored */
  events(query: string, count: number, ms?: number): Promise<any[]>
  /** the first stored event matching the query and the predicate, waiting for it */
  event(query: string, match: (e: any) => boolean, ms?: number): Promise<any>
}

export async function startService(stores: StoreChoice = 'embedded', extra: Record<string, string> = {}): Promise<E2EService> {
  const env = { ...(await freshEnv({ postgres: stores, clickhouse: stores })), FLUSH_INTERVAL_MS: '50', LOG_LEVEL: 'warn', ...extra }
  const service = await spawnService(env)
  const api: E2EService['api'] = async (path, init = {}) => {
    const headers = new Headers(init.headers)
    headers.set('authorization', `Bearer ${PERSONAL_KEY}`)
    let body = init.body
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json')
      body = JSON.stringify(init.json)
    }
    const r = await fetch(`${service.url}${path}`, { ...init, headers, body })
    const text = await r.text()
    return { status: r.status, body: text ? JSON.parse(text) : null }
  }
  return {
    ...service,
    api,
    async events(query, count, ms = 20_000) {
      const deadline = Date.now() + ms
      let results: any[] = []
      while (Date.now() < deadline) {
        results = (await api(`/api/projects/1/events/?limit=1000&${query}`)).body.results
        if (results.length >= count) return results
        await Bun.sleep(100)
      }
      return results
    },
    async event(query, match, ms = 20_000) {
      const deadline = Date.now() + ms
      while (Date.now() < deadline) {
        const found = (await api(`/api/projects/1/events/?limit=1000&${query}`)).body.results.find(match)
        if (found) return found
        await Bun.sleep(100)
      }
      return undefined
    },
  }
}
