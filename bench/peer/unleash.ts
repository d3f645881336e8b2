// Unleash for the peer bench: a Postgres (test/helpers/postgres-server.ts), unleash-server (npm) on it with its
// frontend API, the toggles created through the admin API, and @unleash/proxy in front of the server. Both run
// on `node`, their own runtime, in production mode, with telemetry and version checks off (no network here).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startPostgres, type PostgresServer } from '../../test/helpers/postgres-server'
import { freePort } from '../../test/helpers/spawn-service'
import type { UnleashToggle } from './translate'

const PEER_DIR = import.meta.dir
/** The peers' runtime: the machine's `node`, or BENCH_PEER_NODE (Unleash 8.2 declares Node >= 22; it runs on 20). */
export const PEER_NODE = process.env.BENCH_PEER_NODE ?? 'node'
const ADMIN_TOKEN = '*:*.bench-peer-admin'
export const FRONTEND_TOKEN = 'default:development.bench-peer-frontend'
const BACKEND_TOKEN = 'default:development.bench-peer-backend'
export const PROXY_CLIENT_KEY = 'bench-peer-proxy-client-key'
const ENVIRONMENT = 'development'
/** Unleash's own SDK-path rate limits (20,000 a minute) would answer 429 within the first second of load. */
const NO_RATE_LIMIT = String(1e9)

export interface UnleashPeer {
  /** POST here with the frontend token: the toggles enabled for the body's context. */
  frontendUrl: string
  /** POST here with the proxy client key: the same, answered by @unleash/proxy. */
  proxyUrl: string
  serverPid: number
  proxyPid: number
  /** The Postgres server's postmaster (its backends are its children), when it can be read. */
  postmasterPid(): number | undefined
  stop(): Promise<void>
}

async function waitFor(what: string, probe: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return
    await Bun.sleep(200)
  }
  throw new Error(`${what} did not come up within ${ms / 1000}s`)
}

function nodeProcess(script: string, env: Record<string, string>) {
  return Bun.spawn([PEER_NODE, script], {
    cwd: PEER_DIR,
    // NODE_NO_WARNINGS: its Postgres driver warns of a deprecated call on every start
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'error', NODE_NO_WARNINGS: '1', ...env },
    stdout: 'ignore',
    stderr: 'inherit',
  })
}

async function admin(baseUrl: string, method: string, path: string, body?: unknown): Promise<void> {
  const r = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: ADMIN_TOKEN, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (r.status >= 300) throw new Error(`Unleash ${method} ${path}: ${r.status} ${await r.text()}`)
}

/** A custom stickiness (a group's key) must be a context field marked for stickiness. */
async function createToggles(baseUrl: string, toggles: UnleashToggle[]): Promise<void> {
  const stickinesses = new Set(toggles.flatMap((t) => t.strategies.map((s) => s.parameters.stickiness)))
  for (const name of stickinesses) {
    if (name !== 'userId' && name !== 'default') await admin(baseUrl, 'POST', '/api/admin/context', { name, stickiness: true })
  }
  for (const toggle of toggles) {
    const feature = `/api/admin/projects/default/features/${toggle.name}`
    await admin(baseUrl, 'POST', '/api/admin/projects/default/features', { name: toggle.name, type: 'release' })
    for (const strategy of toggle.strategies) await admin(baseUrl, 'POST', `${feature}/environments/${ENVIRONMENT}/strategies`, strategy)
    await admin(baseUrl, 'POST', `${feature}/environments/${ENVIRONMENT}/on`)
  }
}

/** The postmaster's pid: the first line of postmaster.pid (its backends are its children). */
function postmasterPid(pg: PostgresServer): number | undefined {
  try {
    return Number(readFileSync(join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined
  } catch {
    return undefined
  }
}

export async function startUnleash(toggles: UnleashToggle[]): Promise<UnleashPeer> {
  const pg = await startPostgres()
  const stops: (() => Promise<void>)[] = [() => pg.destroy()]
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined)
  }
  try {
    const databaseUrl = await pg.createDatabase('unleash')
    const serverPort = await freePort()
    const serverUrl = `http://127.0.0.1:${serverPort}`
    const server = nodeProcess(join(PEER_DIR, 'node_modules/unleash-server/dist/server.js'), {
      DATABASE_URL: databaseUrl,
      DATABASE_SSL: 'false',
      HTTP_PORT: String(serverPort),
      CHECK_VERSION: 'false',
      SEND_TELEMETRY: 'false',
      INIT_ADMIN_API_TOKENS: ADMIN_TOKEN,
      INIT_FRONTEND_API_TOKENS: FRONTEND_TOKEN,
      INIT_BACKEND_API_TOKENS: BACKEND_TOKEN,
      SDK_API_RATE_LIMIT_PER_MINUTE: NO_RATE_LIMIT,
      TOKEN_AUTHENTICATION_RATE_LIMIT_PER_MINUTE: NO_RATE_LIMIT,
      UNLEASH_EXPERIMENTAL_REGEX_CONSTRAINT_OPERATOR: 'true',
    })
    stops.push(async () => void (server.kill('SIGTERM'), await server.exited))
    // its migrations run at first start: a minute is not unusual on a busy machine
    await waitFor('unleash-server', async () => (await fetch(`${serverUrl}/health`)).ok)
    await createToggles(serverUrl, toggles)

    const proxyPort = await freePort()
    const proxy = nodeProcess(join(PEER_DIR, 'node_modules/@unleash/proxy/dist/start.js'), {
      PORT: String(proxyPort),
      UNLEASH_URL: `${serverUrl}/api`,
      UNLEASH_API_TOKEN: BACKEND_TOKEN,
      UNLEASH_PROXY_CLIENT_KEYS: PROXY_CLIENT_KEY,
      UNLEASH_APP_NAME: 'phog-bench-peer',
      UNLEASH_ENVIRONMENT: ENVIRONMENT,
    })
    stops.push(async () => void (proxy.kill('SIGTERM'), await proxy.exited))
    const proxyUrl = `http://127.0.0.1:${proxyPort}/proxy`
    // ready once it has fetched the toggles (503 before)
    await waitFor('@unleash/proxy', async () => {
      const r = await fetch(proxyUrl, { method: 'POST', headers: { authorization: PROXY_CLIENT_KEY, 'content-type': 'application/json' }, body: '{"context":{}}' })
      return r.ok
    })
    return {
      frontendUrl: `${serverUrl}/api/frontend`,
      proxyUrl,
      serverPid: server.pid,
      proxyPid: proxy.pid,
      postmasterPid: () => postmasterPid(pg),
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}
