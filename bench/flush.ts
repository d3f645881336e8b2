// Flush: how fast the flush worker lands a backlog in ClickHouse, against a raw `clickhouse-client` insert of
// the same rows into a table of the same structure, in the same run.
//
// The backlog is made the way an outage makes it: the service accepts events while ClickHouse is stopped,
// is killed, and ClickHouse comes back. The service then starts on the same data directory and its flush
// worker has nothing to do but read the log, normalise, insert — timed by watching the table's count.
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { startClickHouse, type ClickHouseServer } from '../test/helpers/clickhouse-server'
import { startPostgres } from '../test/helpers/postgres-server'
import { batchBody } from './ingest'
import { metric, rssMb, sampler, startService, table, tempDir } from './lib'

const KEY = 'phc_bench_project_key_0001'
const EVENTS_PER_REQUEST = 100

async function count(ch: ClickHouseServer, tableName: string): Promise<number> {
  return Number((await ch.query(`SELECT count() FROM ${tableName}`)).trim())
}

/** Posts `requests` batches with a few in flight; every one must be acknowledged. */
async function fillLog(url: string, requests: number): Promise<void> {
  let next = 0
  const lane = async () => {
    while (next < requests) {
      next++
      const r = await fetch(`${url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: batchBody(EVENTS_PER_REQUEST) })
      if (r.status !== 200) throw new Error(`capture answered ${r.status} while filling the log: ${await r.text()}`)
    }
  }
  await Promise.all(Array.from({ length: 8 }, lane))
}

function clickhouseClient(ch: ClickHouseServer, query: string, io: { stdin?: string; stdout?: string }) {
  return Bun.spawn(['clickhouse-client', '--host', '127.0.0.1', '--port', String(ch.tcpPort), '--query', query], {
    stdin: io.stdin ? Bun.file(io.stdin) : 'ignore',
    stdout: io.stdout ? Bun.file(io.stdout) : 'ignore',
    stderr: 'inherit',
  })
}

async function rawInsertSeconds(ch: ClickHouseServer, rowsFile: string): Promise<number> {
  await ch.query('DROP TABLE IF EXISTS bench.events_raw')
  await ch.query('CREATE TABLE bench.events_raw AS bench.events')
  const started = performance.now()
  const proc = clickhouseClient(ch, 'INSERT INTO bench.events_raw FORMAT JSONEachRow', { stdin: rowsFile })
  if ((await proc.exited) !== 0) throw new Error('clickhouse-client insert failed')
  return (performance.now() - started) / 1000
}

/** The raw insert rate of the last flush run (see run.ts). */
export const flushFigures = { rawEventsPerSecond: 0 }

export async function flushBench(): Promise<string> {
  const events = Number(process.env.BENCH_FLUSH_EVENTS ?? 200_000)
  const requests = Math.ceil(events / EVENTS_PER_REQUEST)
  const total = requests * EVENTS_PER_REQUEST
  const [ch, pg] = await Promise.all([startClickHouse(), startPostgres()])
  const dir = tempDir('phog-bench-flush-')
  try {
    const env = { INIT_PROJECT_API_KEY: KEY, DATA_DIR: dir, CLICKHOUSE_URL: `${ch.url}/bench`, DATABASE_URL: await pg.createDatabase() }

    // 1. A backlog: accepted while ClickHouse is down, then the node dies.
    const first = await startService(env)
    await ch.stop()
    await fillLog(first.url, requests)
    for (const pid of first.pids) process.kill(pid, 'SIGKILL')
    await ch.start()

    // 2. A fresh node on the same log drains it; the table's count says when each insert landed.
    const landed: { t: number; n: number }[] = []
    const watch = sampler(20, async () => {
      landed.push({ t: performance.now(), n: await count(ch, 'bench.events').catch(() => 0) })
    })
    const spawned = performance.now()
    const second = await startService(env)
    let peakRss = 0
    const watchRss = sampler(100, () => void (peakRss = Math.max(peakRss, rssMb(second.pid))))
    while ((landed.at(-1)?.n ?? 0) < total && performance.now() - spawned < 300_000) await Bun.sleep(20)
    await watch()
    const allLanded = landed.find((s) => s.n >= total)
    if (!allLanded) throw new Error(`only ${landed.at(-1)?.n} of ${total} events reached ClickHouse`)
    // Persons and definitions (the learner, into Postgres) follow the store writer.
    while ((await metric(second.url, 'pipeline_backlog_records')) > 0 && performance.now() - spawned < 300_000) await Bun.sleep(50)
    const learnedAt = performance.now()
    await watchRss()
    await second.stop()
    const firstInsert = landed.find((s) => s.n > 0)!
    // From the first insert's landing to the last: insert throughput without the boot in it.
    const phogRate = (total - firstInsert.n) / ((allLanded.t - firstInsert.t) / 1000)

    // 3. The same rows, exported and inserted by ClickHouse's own client.
    const rowsFile = join(dir, 'rows.jsonl')
    if ((await clickhouseClient(ch, 'SELECT * FROM bench.events FORMAT JSONEachRow', { stdout: rowsFile }).exited) !== 0) throw new Error('export failed')
    const raw = [await rawInsertSeconds(ch, rowsFile), await rawInsertSeconds(ch, rowsFile), await rawInsertSeconds(ch, rowsFile)].sort((a, b) => a - b)[1]
    if ((await count(ch, 'bench.events_raw')) !== total) throw new Error('raw insert lost rows')
    const rawRate = total / raw
    flushFigures.rawEventsPerSecond = rawRate

    const rows = [
      { target: `clickhouse-client INSERT … FORMAT JSONEachRow (median of 3)`, 'events/s': Math.round(rawRate), 'vs raw': '1.00x', 'wall s': raw, 'peak RSS MB': '' },
      {
        target: 'phog flush worker (log → normalise → insert)',
        'events/s': Math.round(phogRate),
        'vs raw': `${(phogRate / rawRate).toFixed(2)}x`,
        'wall s': (allLanded.t - spawned) / 1000,
        'peak RSS MB': Math.round(peakRss),
      },
      { target: '… and persons/definitions learned (Postgres)', 'events/s': Math.round(total / ((learnedAt - spawned) / 1000)), 'vs raw': '', 'wall s': (learnedAt - spawned) / 1000, 'peak RSS MB': '' },
    ]
    return `### flush: a ${total}-event backlog into ClickHouse ${ch.version} (FLUSH_MAX_EVENTS=20000 per insert); phog's wall time includes its boot\n\n${table(rows)}\n`
  } finally {
    await Promise.all([ch.destroy(), pg.destroy()])
    rmSync(dir, { recursive: true, force: true })
  }
}
