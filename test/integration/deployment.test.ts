// How operators run it: `npm start` under a supervisor that signals only npm's pid, a production install
// (`npm ci --omit=dev && npm start`) in a fresh clone, and the Docker files (which cannot be run here: they
// are parsed, and every variable they set must be one the service reads).
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { ConfigSchema, loadConfig } from '../../src/config'
import { groupMembers, healthy } from '../helpers/process-watch'
import { freePort, ROOT } from '../helpers/spawn-service'
import { freshEnv } from '../helpers/stack'

const CONFIG_NAMES = new Set(Object.keys(ConfigSchema.properties))

/** `npm start` in `cwd` as its own process group; SIGTERM to npm's pid alone; how it ended. */
async function startAndTerminate(cwd: string, env: Record<string, string>): Promise<{ healthy: boolean; code: number | null; leftBehind: number[]; logs: string }> {
  const port = await freePort()
  const proc = Bun.spawn(['setsid', 'npm', 'start'], {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const logs = new Response(proc.stderr).text()
  const up = await healthy(`http://127.0.0.1:${port}`, 120_000)
  // setsid execs npm: the spawned pid is npm's, and it leads its own process group
  process.kill(proc.pid, 'SIGTERM')
  const code = await Promise.race([proc.exited, Bun.sleep(30_000).then(() => null)])
  await Bun.sleep(200)
  const leftBehind = groupMembers(proc.pid)
  for (const pid of leftBehind) process.kill(pid, 'SIGKILL')
  return { healthy: up, code, leftBehind, logs: await logs }
}

describe('running it', () => {
  test('SIGTERM to the `npm start` process drains and exits 0, leaving nothing in its process group', async () => {
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    const r = await startAndTerminate(ROOT, env)
    expect(r.healthy).toBe(true)
    expect(r.code).toBe(0)
    expect(r.leftBehind).toEqual([])
    expect(r.logs).toContain('"msg":"draining"')
    expect(r.logs).toContain('"msg":"stopped"')
  })

  test('a production install in a fresh clone: npm ci --omit=dev && npm start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-prod-'))
    try {
      const clone = Bun.spawnSync(['git', 'clone', '-q', ROOT, join(dir, 'phog')])
      expect(clone.exitCode).toBe(0)
      const install = Bun.spawnSync(['npm', 'ci', '--omit=dev', '--no-audit', '--no-fund'], { cwd: join(dir, 'phog'), stdout: 'pipe', stderr: 'pipe' })
      expect(install.exitCode).toBe(0)
      // no dev tools came with it
      expect(Bun.spawnSync(['test', '-e', join(dir, 'phog/node_modules/playwright-core')]).exitCode).not.toBe(0)
      const r = await startAndTerminate(join(dir, 'phog'), { DATA_DIR: join(dir, 'data') })
      expect(r.healthy).toBe(true)
      expect(r.code).toBe(0)
      expect(r.leftBehind).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('Docker files', () => {
  test('compose.yaml: service, Postgres 16, ClickHouse 24.8, volumes, health checks, ordered start; its variables are the service’s', () => {
    const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'))
    expect(Object.keys(compose.services).sort()).toEqual(['clickhouse', 'phog', 'postgres'])
    expect(compose.services.postgres.image).toBe('postgres:16')
    expect(compose.services.clickhouse.image).toBe('clickhouse/clickhouse-server:24.8')
    for (const name of ['phog', 'postgres', 'clickhouse']) expect(compose.services[name].healthcheck.test.length).toBeGreaterThan(0)
    expect(compose.services.phog.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, clickhouse: { condition: 'service_healthy' } })
    expect(Object.keys(compose.volumes).sort()).toEqual(['clickhouse-data', 'phog-data', 'postgres-data'])
    for (const name of Object.keys(compose.services.phog.environment)) expect(CONFIG_NAMES.has(name) ? name : `unknown ${name}`).toBe(name)
    // the URLs point at the compose services and carry the same password as the databases
    expect(compose.services.phog.environment.DATABASE_URL).toContain('@postgres:5432/phog')
    expect(compose.services.phog.environment.CLICKHOUSE_URL).toContain('@clickhouse:8123/phog')
  })

  test('compose.yaml refuses to start without passwords, and passes them so that any character works', () => {
    const text = readFileSync(join(ROOT, 'compose.yaml'), 'utf8')
    expect(text).not.toContain('change-me')
    const compose = parse(text)
    const phog = compose.services.phog.environment
    // no password pasted into a URL: each goes in a variable of its own
    for (const url of [phog.DATABASE_URL, phog.CLICKHOUSE_URL]) expect(new URL(url).password).toBe('')
    expect(phog.DATABASE_PASSWORD).toStartWith('${POSTGRES_PASSWORD:?')
    expect(compose.services.postgres.environment.POSTGRES_PASSWORD).toStartWith('${POSTGRES_PASSWORD:?')
    expect(phog.CLICKHOUSE_PASSWORD).toStartWith('${CLICKHOUSE_PASSWORD:?')
    expect(compose.services.clickhouse.environment.CLICKHOUSE_PASSWORD).toStartWith('${CLICKHOUSE_PASSWORD:?')

    // compose's interpolation, as `docker compose up` does it: unset → refused with the message; set → the service
    // reads passwords with @, /, :, % and # as they are
    const interpolate = (value: string, env: Record<string, string>) =>
      value.replace(/\$\{([A-Z_]+)(?::([?-])([^}]*))?\}/g, (_, name: string, op: string | undefined, arg: string) => {
        if (env[name]) return env[name]
        if (op === '?') throw new Error(`required variable ${name} is missing a value: ${arg}`)
        return op === '-' ? arg : ''
      })
    const environment = (env: Record<string, string>) =>
      Object.fromEntries(Object.entries(phog as Record<string, string>).map(([k, v]) => [k, interpolate(String(v), env)]))
    expect(() => environment({})).toThrow('POSTGRES_PASSWORD in .env')
    expect(() => environment({ POSTGRES_PASSWORD: 'x' })).toThrow('CLICKHOUSE_PASSWORD in .env')
    const passwords = { POSTGRES_PASSWORD: 'p@ss/w:rd%20#1', CLICKHOUSE_PASSWORD: 'c@h/:%41?#' }
    const config = loadConfig(environment(passwords))
    const pg = new URL(config.DATABASE_URL!)
    expect([decodeURIComponent(pg.username), decodeURIComponent(pg.password), pg.host, pg.pathname]).toEqual(['phog', passwords.POSTGRES_PASSWORD, 'postgres:5432', '/phog'])
    const ch = new URL(config.CLICKHOUSE_URL!)
    expect([decodeURIComponent(ch.password), ch.host, ch.pathname]).toEqual([passwords.CLICKHOUSE_PASSWORD, 'clickhouse:8123', '/phog'])
  })

  test('Dockerfile: the official Bun image at the pinned version; every ENV is a setting the service reads', () => {
    const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    const bun = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).dependencies.bun
    expect(text).toContain(`FROM oven/bun:${bun}-slim`)
    const env = text.slice(text.lastIndexOf('ENV ')).split('\n\n')[0]!
    const names = [...env.matchAll(/([A-Z_]+)=/g)].map((m) => m[1]!).filter((n) => n !== 'NODE_ENV' && !n.startsWith('BUN_JSC_'))
    expect(names.length).toBeGreaterThan(2)
    for (const name of names) expect(CONFIG_NAMES.has(name) ? name : `unknown ${name}`).toBe(name)
    expect(text).toContain('CMD ["bun", "run", "src/main.ts"]')
    // the admin CLI on PATH (run in the image's layout by image-layout.test.ts)
    expect(text).toContain('COPY bin ./bin')
    expect(text).toContain('ln -s /app/bin/phog /usr/local/bin/phog')
  })
})
