// `import events`: a 100,000-line export imported twice into a running service (the second run skips every line as
// a duplicate; the store holds each uuid once), its persons learned (an $identify in the file merges) and its
// historical timestamps kept; the import's throughput against /batch/ on the same service; gzip (by magic bytes)
// and CSV as PostHog exports it, with refused lines counted by reason, without a service running; and a SIGKILL of
// the import mid-way, then a resume: nothing lost, nothing twice. Real processes, the DuckDB event store; and a
// smaller import on ClickHouse 18.16 and Postgres (history path, each uuid inserted once, counted by the audit view).
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { eventually } from '../chaos/load'
import { insertedByUuid } from '../helpers/clickhouse-audit'
import { freshDataDir, freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { ROOT, runCli, spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { tempDir } from '../helpers/temp'

const services: ServiceProcess[] = []
afterAll(async () => {
  for (const s of services) await s.kill().catch(() => undefined)
})

const HISTORY_START = Date.UTC(2023, 0, 1)
const uuidOf = (set: number, i: number) => `0193c${String(set).padStart(3, '0')}-0000-7000-8000-${i.toString(16).padStart(12, '0')}`

/** PostHog's JSON-lines export of `n` events over 2023, with an $identify merging anon-7 into user-7 in the middle. */
function exportLines(set: number, n: number): string[] {
  const lines: string[] = []
  for (let i = 0; i < n; i++) {
    const identify = i === Math.floor(n / 2)
    lines.push(
      JSON.stringify({
        uuid: uuidOf(set, i),
        event: identify ? '$identify' : i % 3 === 0 ? '$pageview' : 'imported_event',
        distinct_id: identify ? 'user-7' : `anon-${i % 50}`,
        properties: identify ? { $anon_distinct_id: 'anon-7', $set: { plan: 'imported' } } : { $current_url: `https://history.example/${i % 20}`, i },
        timestamp: new Date(HISTORY_START + i * 60_000).toISOString(),
        created_at: new Date(HISTORY_START + i * 60_000 + 500).toISOString(),
        elements_chain: '',
        person_id: '00000000-0000-0000-0000-000000000000',
      }),
    )
  }
  return lines
}

async function storedUuids(dataDir: string): Promise<Map<string, number>> {
  const { DuckDBInstance } = await import('@duckdb/node-api')
  const instance = await DuckDBInstance.create(join(dataDir, 'events.duckdb'), { access_mode: 'READ_ONLY' })
  try {
    const c = await instance.connect()
    const rows = (await c.runAndReadAll('SELECT uuid, count(*) FROM events GROUP BY uuid')).getRows()
    c.closeSync()
    return new Map(rows.map(([u, n]) => [String(u), Number(n)]))
  } finally {
    instance.closeSync()
  }
}

const api = async (url: string, path: string) => (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })).json() as Promise<any>

interface Summary {
  via: string
  read: number
  stored: number
  duplicates: number
  refused: number
  in_stores: boolean
  seconds: number
  events_per_second: number
  files: { format: string; gzip: boolean; read: number; stored: number; duplicates: number; refused: Record<string, number>; resumed_after_record: number }[]
}

const env = async () => ({ DATA_DIR: await freshDataDir('embedded'), INIT_PROJECT_API_KEY: PROJECT_KEY, INIT_PERSONAL_API_KEY: PERSONAL_KEY, LOG_LEVEL: 'warn' })

describe('import events into a running service', () => {
  test('100,000 lines twice: all stored, then all skipped; persons learned; timestamps kept; throughput against /batch/', async () => {
    const e = await env()
    const dir = tempDir('phog-import-')
    const file = join(dir, 'events.jsonl')
    writeFileSync(file, `${exportLines(1, 100_000).join('\n')}\n`)
    const service = await spawnService(e)
    services.push(service)

    const first = await runCli(['import', 'events', file], e)
    expect({ code: first.code, stderr: first.code === 0 ? '' : first.stderr }).toEqual({ code: 0, stderr: '' })
    const one = JSON.parse(first.stdout) as Summary
    expect(one).toMatchObject({ read: 100_000, stored: 100_000, duplicates: 0, refused: 0, in_stores: true })
    expect(one.via).toContain('running service')
    expect(first.stderr).toContain('done: 100000 read, 100000 stored')

    const second = await runCli(['import', 'events', file], e)
    expect(second.code).toBe(0)
    const two = JSON.parse(second.stdout) as Summary
    expect(two).toMatchObject({ read: 100_000, stored: 0, duplicates: 100_000, refused: 0 })

    // the learner made the person of the $identify, merged with the anonymous id, as capture's path does
    const person = await api(service.url, '/api/projects/@current/persons/?distinct_id=user-7')
    expect([...person.results[0].distinct_ids].sort()).toEqual(['anon-7', 'user-7'])
    expect(person.results[0].properties.plan).toBe('imported')
    // the event definitions were learned too
    const definitions = await api(service.url, '/api/projects/@current/event_definitions/?search=imported_event')
    expect(definitions.results.map((d: { name: string }) => d.name)).toContain('imported_event')
    // historical timestamps kept as exported
    const identify = await api(service.url, '/api/projects/@current/events/?event=$identify&after=2022-12-01T00:00:00Z')
    expect(identify.results[0].uuid).toBe(uuidOf(1, 50_000))
    expect(new Date(identify.results[0].timestamp).getTime()).toBe(HISTORY_START + 50_000 * 60_000)

    // the same number of events through /batch/ (1,000 a request, 4 at a time), timed until stored as the import is
    const viaBatch = exportLines(2, 100_000).map((l) => JSON.parse(l) as unknown)
    const batches = Array.from({ length: 100 }, (_, b) => JSON.stringify({ api_key: PROJECT_KEY, batch: viaBatch.slice(b * 1000, (b + 1) * 1000) }))
    const started = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < batches.length) {
          const body = batches[next++]!
          const r = await fetch(`${service.url}/batch/`, { method: 'POST', body })
          expect(r.status).toBe(200)
        }
      }),
    )
    const drained = await eventually(async () => ((await (await fetch(`${service.url}/_ready`)).json()) as { backlog?: { records: number } }).backlog?.records === 0, 300_000, 50)
    expect(drained).toBe(true)
    const batchSeconds = (performance.now() - started) / 1000
    process.stderr.write(
      `import throughput: ${one.events_per_second} events/s (100,000 in ${one.seconds} s, stored and learned; the second run, all duplicates: ${two.seconds} s); /batch/: ${Math.round(100_000 / batchSeconds)} events/s (100,000 in ${batchSeconds.toFixed(2)} s, until the log drained)\n`,
    )

    expect(await service.stop()).toBe(0)
    const stored = await storedUuids(e.DATA_DIR)
    expect(stored.size).toBe(200_000)
    expect([...stored.values()].every((n) => n === 1)).toBe(true)
    for (const i of [0, 1, 49_999, 50_000, 99_999]) expect(stored.get(uuidOf(1, i))).toBe(1)
  }, 600_000)

  test('SIGKILL of the import mid-way, then a resume: every line stored once, none lost', async () => {
    const e = await env()
    const dir = tempDir('phog-import-')
    const file = join(dir, 'events.jsonl')
    writeFileSync(file, `${exportLines(3, 100_000).join('\n')}\n`)
    const service = await spawnService(e)
    services.push(service)

    const proc = Bun.spawn([process.execPath, 'run', 'src/cli.ts', 'import', 'events', file], { cwd: ROOT, env: { ...process.env, ...e }, stdout: 'ignore', stderr: 'ignore' })
    const progressDir = join(e.DATA_DIR, 'import')
    const doneSoFar = () => {
      try {
        const [name] = readdirSync(progressDir).filter((f) => f.endsWith('.json'))
        return name ? (JSON.parse(readFileSync(join(progressDir, name), 'utf8')) as { records_done: number }).records_done : 0
      } catch {
        return 0
      }
    }
    expect(await eventually(async () => doneSoFar() >= 20_000, 120_000, 20)).toBe(true)
    proc.kill('SIGKILL')
    await proc.exited
    const killedAt = doneSoFar()
    expect(killedAt).toBeLessThan(100_000)

    const resumed = await runCli(['import', 'events', file], e)
    expect({ code: resumed.code, stderr: resumed.code === 0 ? '' : resumed.stderr }).toEqual({ code: 0, stderr: '' })
    expect(resumed.stderr).toContain(`resuming after record ${killedAt}`)
    const summary = JSON.parse(resumed.stdout) as Summary
    expect(summary.files[0]!.resumed_after_record).toBe(killedAt)
    // every line accounted for once: stored by one of the runs, or (sent after the last saved progress) a duplicate
    expect(summary.read).toBe(100_000)
    expect(summary.stored + summary.duplicates).toBe(100_000)
    expect(summary.duplicates).toBeLessThanOrEqual(3000) // at most the batches on their way when it was killed
    // the progress file is gone once the import completed
    expect(readdirSync(progressDir).filter((f) => f.endsWith('.json'))).toEqual([])

    expect(await service.stop()).toBe(0)
    const stored = await storedUuids(e.DATA_DIR)
    expect(stored.size).toBe(100_000)
    expect([...stored.values()].every((n) => n === 1)).toBe(true)
  }, 600_000)
})

describe('import events with no service running', () => {
  test('gzip recognised by its bytes, CSV as PostHog exports it, refused lines counted by reason; the run takes the pipeline itself', async () => {
    const e = await env()
    const dir = tempDir('phog-import-')
    const now = Date.now()
    const good = exportLines(4, 1000)
    const bad = [
      'not json at all',
      JSON.stringify({ uuid: 'not-a-uuid', event: 'x', distinct_id: 'd', timestamp: '2023-01-01T00:00:00Z' }),
      JSON.stringify({ uuid: uuidOf(9, 1), event: 'x', distinct_id: '', timestamp: '2023-01-01T00:00:00Z' }),
      JSON.stringify({ uuid: uuidOf(9, 2), event: 'x', distinct_id: 'd', timestamp: 'yesterday-ish' }),
      JSON.stringify({ uuid: uuidOf(9, 3), event: 'x', distinct_id: 'd', timestamp: new Date(now + 3 * 86_400_000).toISOString() }),
      JSON.stringify({ uuid: uuidOf(9, 4), event: 'x', distinct_id: 'd', timestamp: '2023-01-01T00:00:00Z', properties: { big: 'x'.repeat(1_200_000) } }),
      JSON.stringify({ uuid: uuidOf(9, 5), event: 'x', distinct_id: 'd', timestamp: '2023-01-01T00:00:00Z', properties: JSON.parse(`${'{"a":'.repeat(200)}1${'}'.repeat(200)}`) }),
      JSON.stringify({ uuid: uuidOf(9, 6), event: '', distinct_id: 'd', timestamp: '2023-01-01T00:00:00Z' }),
    ]
    // a gzip file whose name says nothing of it
    const gz = join(dir, 'export-part-1')
    writeFileSync(gz, gzipSync(`${[...good.slice(0, 500), ...bad, ...good.slice(500)].join('\n')}\n`))

    // CSV: the events table's export (the event's own fields as `*.…`, properties as JSON text, person columns after)
    const quote = (v: string) => `"${v.replaceAll('"', '""')}"`
    const csvRows = exportLines(5, 300).map((l) => {
      const o = JSON.parse(l) as Record<string, unknown>
      return [o.uuid, o.event, JSON.stringify(o.properties), o.timestamp, o.distinct_id, '', o.created_at, o.event, 'someone@example.com'].map((v) => quote(String(v))).join(',')
    })
    // a property value with a newline and quotes, inside a quoted field
    csvRows.push([uuidOf(5, 1000), 'multi_line', JSON.stringify({ note: 'line one\nline "two"' }), '2023-02-01T00:00:00Z', 'csv-user', '', '', 'multi_line', ''].map(quote).join(','))
    csvRows.push([uuidOf(5, 1001), 'short_row'].map(quote).join(','))
    const csv = join(dir, 'events.csv')
    writeFileSync(csv, `*.uuid,*.event,*.properties,*.timestamp,*.distinct_id,*.elements_chain,*.created_at,event,person\n${csvRows.join('\r\n')}\r\n`)

    const run = await runCli(['import', 'events', gz, csv, '--token', PROJECT_KEY], e)
    expect(run.code).toBe(1) // lines were refused: the summary says which, on stdout
    const summary = JSON.parse(run.stdout) as Summary
    expect(summary.via).toContain('no service was running')
    const [gzFile, csvFile] = summary.files
    expect(gzFile).toMatchObject({ format: 'jsonl', gzip: true, read: 1008, stored: 1000, duplicates: 0 })
    expect(gzFile!.refused).toEqual({
      invalid_json: 1,
      invalid_uuid: 1,
      no_distinct_id: 1,
      invalid_timestamp: 1,
      timestamp_in_future: 1,
      too_long: 1,
      too_deep: 1,
      no_event_name: 1,
    })
    expect(csvFile).toMatchObject({ format: 'csv', gzip: false, read: 302, stored: 301, duplicates: 0, refused: { wrong_column_count: 1 } })
    expect(summary.in_stores).toBe(true)

    // stored: the service started afterwards finds them, the CSV's multi-line value intact
    const service = await spawnService(e)
    services.push(service)
    const multi = await api(service.url, '/api/projects/@current/events/?event=multi_line&after=2023-01-01T00:00:00Z')
    expect(multi.results[0].properties.note).toBe('line one\nline "two"')
    expect(await service.stop()).toBe(0)
    const stored = await storedUuids(e.DATA_DIR)
    expect(stored.size).toBe(1301)

    // again: everything a duplicate (the refused lines refused again)
    const again = await runCli(['import', 'events', gz, csv], e)
    const twice = JSON.parse(again.stdout) as Summary
    expect(twice).toMatchObject({ stored: 0, duplicates: 1301, refused: 9 })
  }, 600_000)
})

describe('import events on ClickHouse 18.16 and Postgres', () => {
  test('history through the log\'s history path, twice: each uuid inserted once, the person learned', async () => {
    const e: Record<string, string> = { ...(await freshEnv({ postgres: 'real', clickhouse: 'real' })), LOG_LEVEL: 'warn' }
    const file = join(tempDir('phog-import-'), 'events.jsonl')
    const lines = exportLines(6, 5000)
    writeFileSync(file, `${lines.join('\n')}\n`)
    const service = await spawnService(e)
    services.push(service)
    const first = await runCli(['import', 'events', file], e)
    expect({ code: first.code, stderr: first.code === 0 ? '' : first.stderr }).toEqual({ code: 0, stderr: '' })
    expect(JSON.parse(first.stdout)).toMatchObject({ read: 5000, stored: 5000, duplicates: 0, in_stores: true })
    const second = await runCli(['import', 'events', file], e)
    expect(JSON.parse(second.stdout)).toMatchObject({ read: 5000, stored: 0, duplicates: 5000 })
    const person = await api(service.url, '/api/projects/@current/persons/?distinct_id=user-7')
    expect([...person.results[0].distinct_ids].sort()).toEqual(['anon-7', 'user-7'])
    const inserted = await insertedByUuid(e.CLICKHOUSE_URL!, 1, lines.map((_, i) => uuidOf(6, i)))
    expect(inserted.size).toBe(5000)
    expect([...inserted.values()].every((n) => n === 1)).toBe(true)
    expect(await service.stop()).toBe(0)
  }, 300_000)
})
