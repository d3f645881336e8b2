// Spread: the current month's flush rate into ClickHouse while a client backfills a spread of history (one
// event a month from 1970 on, a ClickHouse part per month it touches), against the same load without the
// spread, in the same run. Both phases send current events as fast as the lanes go for BENCH_SECONDS; the rate
// is the current-month rows landed per second, read from ClickHouse's count.
import { rmSync } from 'node:fs'
import { startClickHouse, type ClickHouseServer } from '../test/helpers/clickhouse-server'
import { startPostgres } from '../test/helpers/postgres-server'
import { batchBody } from './ingest'
import { startService, table, tempDir } from './lib'

const KEY = 'phc_bench_project_key_0001'
const MONTHS = 56 * 12 // 1970-01 … 2025-12: past months only (future times become the time of receipt)

function spreadBody(round: number): string {
  return JSON.stringify({
    api_key: KEY,
    batch: Array.from({ length: MONTHS }, (_, i) => ({
      event: 'backfill',
      distinct_id: `old-${round}`,
      timestamp: new Date(Date.UTC(1970 + Math.floor(i / 12), i % 12, 1 + (round % 27))).toISOString(),
      properties: { round, i },
    })),
  })
}

async function currentRows(ch: ClickHouseServer): Promise<number> {
  return Number((await ch.query(`SELECT count() FROM bench.events WHERE toYYYYMM(timestamp) >= toYYYYMM(now() - 86400 * 40)`)).trim())
}

async function phase(url: string, ch: ClickHouseServer, seconds: number, spread: boolean): Promise<{ current: number; spreadSent: number; rate: number }> {
  const before = await currentRows(ch)
  const until = performance.now() + seconds * 1000
  let sent = 0
  let spreadSent = 0
  const lane = async () => {
    while (performance.now() < until) {
      const r = await fetch(`${url}/batch/`, { method: 'POST', body: batchBody(100) })
      if (r.status === 200) sent += 100
      await r.arrayBuffer()
    }
  }
  const spreader = async () => {
    for (let round = 0; performance.now() < until; round++) {
      const r = await fetch(`${url}/batch/`, { method: 'POST', body: spreadBody(round) })
      if (r.status === 200) spreadSent += MONTHS
      await r.arrayBuffer()
      await Bun.sleep(50)
    }
  }
  const started = performance.now()
  await Promise.all([lane(), lane(), lane(), ...(spread ? [spreader()] : [])])
  // the rate at which what was sent lands: wait for the current rows (bounded), time from the start
  const target = before + sent
  let landed = before
  while (landed < target && performance.now() - started < seconds * 1000 + 120_000) {
    landed = await currentRows(ch)
    if (landed < target) await Bun.sleep(50)
  }
  const elapsed = (performance.now() - started) / 1000
  return { current: landed - before, spreadSent, rate: (landed - before) / elapsed }
}

export async function spreadBench(seconds: number): Promise<string> {
  const [ch, pg] = await Promise.all([startClickHouse(), startPostgres()])
  const dir = tempDir('phog-bench-spread-')
  try {
    const svc = await startService({ INIT_PROJECT_API_KEY: KEY, DATA_DIR: dir, CLICKHOUSE_URL: `${ch.url}/bench`, DATABASE_URL: await pg.createDatabase() })
    try {
      await phase(svc.url, ch, 2, false) // warm up
      const alone = await phase(svc.url, ch, seconds, false)
      const spread = await phase(svc.url, ch, seconds, true)
      const parts = Number((await ch.query(`SELECT count() FROM system.parts WHERE database = 'bench' AND table = 'events' AND active`)).trim())
      const rows = [
        { phase: 'current events alone', 'current events/s landed': Math.round(alone.rate), 'vs alone': '1.00x', 'spread events sent': 0 },
        { phase: `… while a client sends ${MONTHS}-month spreads`, 'current events/s landed': Math.round(spread.rate), 'vs alone': `${(spread.rate / alone.rate).toFixed(2)}x`, 'spread events sent': spread.spreadSent },
      ]
      return `### spread: the current month's flush rate into ClickHouse ${ch.version} while history is backfilled (3 lanes of 100-event batches, ${seconds} s each; ${parts} active parts after)\n\n${table(rows)}\n`
    } finally {
      await svc.stop()
    }
  } finally {
    await Promise.all([ch.destroy(), pg.destroy()])
    rmSync(dir, { recursive: true, force: true })
  }
}
