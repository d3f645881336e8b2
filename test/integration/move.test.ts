// `move`: an embedded install (PGlite + DuckDB, the default) with flags and their history, a cohort, persons, keys,
// an insight, a dashboard, a recording and MOVE_TEST_EVENTS events (200,000 by default: the 1,000,000 figure is
// bench/move.ts's) moved into a real Postgres 15 and ClickHouse 18.16. Counts equal per table (every table the
// migrations create) and per project; trends, a funnel and unique users answer the same on the source and on a
// service started on the targets, where the keys and flags work; a second move doubles nothing; a move SIGKILLed
// halfway leaves targets a service refuses to start on, naming the command, and running move again finishes it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from '../chaos/load'
import { sharedClickHouse, sharedPostgres } from '../helpers/shared-servers'
import { freshDataDir, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { ROOT, runCli, spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { addEvents, buildSource, DAY, insightAnswers, type SourceFacts } from './move-fixture'

const EVENTS = Number(process.env.MOVE_TEST_EVENTS ?? 200_000)
const services: ServiceProcess[] = []
afterAll(async () => {
  for (const s of services) await s.kill().catch(() => undefined)
})

/** Every table the Postgres migrations create (and do not drop): each must be moved. */
function migrationTables(): string[] {
  const dir = join(ROOT, 'sql/postgres')
  const created = new Set<string>()
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql')).sort()) {
    const text = readFileSync(join(dir, file), 'utf8')
    for (const m of text.matchAll(/create\s+table\s+(?:if\s+not\s+exists\s+)?(?:public\.)?"?(\w+)"?/gi)) created.add(m[1].toLowerCase())
    for (const m of text.matchAll(/drop\s+table\s+(?:if\s+exists\s+)?(?:public\.)?"?(\w+)"?/gi)) created.delete(m[1].toLowerCase())
  }
  created.delete('schema_migrations')
  return [...created].sort()
}

interface Report {
  ok: boolean
  resumed: boolean
  tables: Record<string, { source: number; target: number; ok: boolean }>
  events: { source: number; target: number; ok: boolean; by_project?: Record<string, { source: number; target: number }> }
  recordings: { sessions: { source: number; target: number }; blocks: { source: number; target: number } }
  this_run: { events_read: number; events_written: number; events_per_second: number; event_seconds: number }
  start_with: { DATABASE_URL: string; CLICKHOUSE_URL: string }
}

async function targets(): Promise<{ databaseUrl: string; clickhouseUrl: string }> {
  const ch = await sharedClickHouse()
  return { databaseUrl: await (await sharedPostgres()).createDatabase(), clickhouseUrl: `${ch.url}/move_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}` }
}

const moveArgs = (dataDir: string, t: { databaseUrl: string; clickhouseUrl: string }) => ['move', '--database-url', t.databaseUrl, '--clickhouse-url', t.clickhouseUrl, '--from', dataDir]
const cliEnv = (dataDir: string) => ({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' })

async function move(dataDir: string, t: { databaseUrl: string; clickhouseUrl: string }): Promise<Report> {
  const r = await runCli(moveArgs(dataDir, t), cliEnv(dataDir))
  if (r.code !== 0) throw new Error(`move exited ${r.code}:\n${r.stdout}\n${r.stderr.slice(-3000)}`)
  return JSON.parse(r.stdout) as Report
}

function expectAllCounted(report: Report, facts: SourceFacts) {
  expect(report.ok).toBe(true)
  for (const table of migrationTables()) {
    expect(report.tables[table], `table ${table} (from sql/postgres) is moved`).toBeDefined()
    expect(report.tables[table].ok).toBe(true)
  }
  expect(report.events.source).toBe(facts.events)
  expect(report.events.target).toBe(facts.events)
  expect(report.events.by_project?.['1']).toEqual({ source: facts.events, target: facts.events })
  expect(report.recordings.sessions).toMatchObject({ source: 1, target: 1 })
}

const targetEnv = (t: { databaseUrl: string; clickhouseUrl: string }, dataDir: string) => ({ DATABASE_URL: t.databaseUrl, CLICKHOUSE_URL: t.clickhouseUrl, DATA_DIR: dataDir, LOG_LEVEL: 'warn' })

describe('move from the embedded stores to Postgres + ClickHouse 18.16', () => {
  let dataDir: string
  let facts: SourceFacts
  let sourceAnswers: unknown

  beforeAll(async () => {
    dataDir = await freshDataDir('embedded')
    const env = { DATA_DIR: dataDir, INIT_PROJECT_API_KEY: PROJECT_KEY, INIT_PERSONAL_API_KEY: PERSONAL_KEY, LOG_LEVEL: 'warn' }
    let source = await spawnService(env)
    services.push(source)
    facts = await buildSource(source.url)
    expect(await source.stop()).toBe(0)
    facts.events += await addEvents(join(dataDir, 'events.duckdb'), EVENTS, Date.now() - 14 * DAY)
    source = await spawnService(env)
    services.push(source)
    sourceAnswers = await insightAnswers(source.url, facts.events)
    expect(await source.stop()).toBe(0)
  }, 300_000)

  test('refused while a service runs on the source', async () => {
    const source = await spawnService({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' })
    services.push(source)
    const r = await runCli(moveArgs(dataDir, await targets()), cliEnv(dataDir))
    expect(r.code).toBe(64)
    expect(r.stderr).toContain(`a service (pid ${source.pid}) runs on`)
    expect(await source.stop()).toBe(0)
  }, 120_000)

  test('everything moved, counts equal per table and project, insights answer the same; run again: nothing doubled', async () => {
    const t = await targets()
    const first = await move(dataDir, t)
    expectAllCounted(first, facts)
    expect(first.this_run.events_written).toBe(facts.events)
    expect(first.start_with).toEqual({ DATABASE_URL: t.databaseUrl, CLICKHOUSE_URL: t.clickhouseUrl })
    console.log(`move: ${facts.events} events in ${first.this_run.event_seconds} s, ${first.this_run.events_per_second} events/s`)

    const second = await move(dataDir, t)
    expectAllCounted(second, facts)
    expect(second.this_run.events_written).toBe(0)

    const target = await spawnService(targetEnv(t, await freshDataDir('embedded')))
    services.push(target)
    expect(await insightAnswers(target.url, facts.events, sourceAnswers)).toEqual(sourceAnswers)
    // the keys kept their values, the flag its id and rollout
    const flags = await fetch(`${target.url}/api/projects/@current/feature_flags/`, { headers: { authorization: `Bearer ${facts.personalKey}` } })
    expect(flags.status).toBe(200)
    const list = (await flags.json()) as { results: { id: number; key: string }[] }
    expect(list.results.find((f) => f.key === 'moved-flag')?.id).toBe(facts.flagId)
    const decide = await fetch(`${target.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'user-1' }) })
    expect(((await decide.json()) as { featureFlags: Record<string, unknown> }).featureFlags['moved-flag']).toBe(true)
    // a new flag takes an id after the moved ones (sequences moved)
    const created = await fetch(`${target.url}/api/projects/@current/feature_flags/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'after-the-move', filters: { groups: [{ rollout_percentage: 10 }] } }),
    })
    expect(created.status).toBe(201)
    expect(((await created.json()) as { id: number }).id).toBeGreaterThan(facts.flagId)
    expect(await target.stop()).toBe(0)
    // the targets have served since: a move again would overwrite what changed there (the new flag stays)
    const again = await runCli(moveArgs(dataDir, t), cliEnv(dataDir))
    expect(again.code).toBe(64)
    expect(again.stderr).toContain('a service has run on it since')
  }, 600_000)

  test('a move SIGKILLed halfway: the service refuses the targets, naming the command; move again finishes it', async () => {
    const t = await targets()
    const proc = Bun.spawn([process.execPath, 'run', 'src/cli.ts', ...moveArgs(dataDir, t)], { cwd: ROOT, env: { ...process.env, ...cliEnv(dataDir) }, stdout: 'ignore', stderr: 'pipe' })
    let stderr = ''
    const decoder = new TextDecoder()
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) {
      stderr += decoder.decode(chunk, { stream: true })
      if (/move: events [\d,]+ \//.test(stderr)) break
    }
    proc.kill('SIGKILL')
    await proc.exited
    expect(stderr).toMatch(/move: events/)

    const refused = Bun.spawn([process.execPath, 'run', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...targetEnv(t, await freshDataDir('embedded')), PORT: '0', HOST: '127.0.0.1' },
      stdout: 'ignore',
      stderr: 'pipe',
    })
    const [code, log] = await Promise.all([refused.exited, new Response(refused.stderr).text()])
    expect(code).toBe(1)
    expect(log).toContain('did not finish')
    expect(log).toContain('npm run -s cli -- move --database-url URL --clickhouse-url URL')

    const finished = await move(dataDir, t)
    expectAllCounted(finished, facts)
    // resumed after the batches the killed run had stored (they were not written again)
    expect(finished.resumed).toBe(true)
    expect(finished.this_run.events_written).toBeLessThan(facts.events)
    const target = await spawnService(targetEnv(t, await freshDataDir('embedded')))
    services.push(target)
    expect(await eventually(async () => (await fetch(`${target.url}/_health`)).ok, 10_000)).toBe(true)
    expect(await insightAnswers(target.url, facts.events, sourceAnswers)).toEqual(sourceAnswers)
    expect(await target.stop()).toBe(0)
  }, 600_000)
})

describe('move from the embedded SQLite event store', () => {
  test('everything moved, counts equal, insights answer the same', async () => {
    const dataDir = await freshDataDir('embedded')
    const env = { DATA_DIR: dataDir, EMBEDDED_EVENT_STORE: 'sqlite', INIT_PROJECT_API_KEY: PROJECT_KEY, INIT_PERSONAL_API_KEY: PERSONAL_KEY, LOG_LEVEL: 'warn' }
    let source = await spawnService(env)
    services.push(source)
    const facts = await buildSource(source.url)
    expect(await source.stop()).toBe(0)
    facts.events += await addEvents(join(dataDir, 'events.sqlite'), 30_000, Date.now() - 14 * DAY)
    source = await spawnService(env)
    services.push(source)
    const answers = await insightAnswers(source.url, facts.events)
    expect(await source.stop()).toBe(0)
    const t = await targets()
    expectAllCounted(await move(dataDir, t), facts)
    const target = await spawnService(targetEnv(t, await freshDataDir('embedded')))
    services.push(target)
    expect(await insightAnswers(target.url, facts.events, answers)).toEqual(answers)
    expect(await target.stop()).toBe(0)
  }, 600_000)
})
