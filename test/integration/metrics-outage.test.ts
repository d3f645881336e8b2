// Metrics tell the truth in every state: with ClickHouse unreachable the backlog gauges rise with each step of
// accepted events (they used to stay 0 until the worker made progress), store_up says 0, received events are
// counted at acceptance; once ClickHouse starts they return to 0 and every event is stored once. The outage is
// readable: failures counted as `unreachable`, its start, summaries, end and drain in the log, and a SIGTERM
// during an outage names the failing store in its exit line.
import { describe, expect, test } from 'bun:test'
import { startClickHouse } from '../helpers/clickhouse-server'
import { freePort, spawnService } from '../helpers/spawn-service'
import { freshEnv, PROJECT_KEY } from '../helpers/stack'
import { eventually } from '../chaos/load'

type LogLine = Record<string, unknown> & { msg: string }
const logLines = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine)

function gauges(text: string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line) continue
    const space = line.lastIndexOf(' ')
    out[line.slice(0, space)] = Number(line.slice(space + 1))
  }
  return out
}

describe('metrics while ClickHouse is down', () => {
  test('backlog gauges rise with each step, store_up is 0, then all returns to 0 and every event is stored once', async () => {
    const [httpPort, tcpPort] = [await freePort(), await freePort()]
    const database = `outage_${crypto.randomUUID().slice(0, 8)}`
    const clickhouseUrl = `http://default:@127.0.0.1:${httpPort}/${database}`
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    const svc = await spawnService({ ...env, CLICKHOUSE_URL: clickhouseUrl, FLUSH_INTERVAL_MS: '50', LOG_LEVEL: 'info', OUTAGE_LOG_INTERVAL_MS: '300' })
    const ch = { server: null as Awaited<ReturnType<typeof startClickHouse>> | null }
    try {
      const read = async () => gauges(await (await fetch(`${svc.url}/metrics`)).text())
      const uuids: string[] = []
      let previous = { records: 0, bytes: 0 }
      for (let step = 1; step <= 3; step++) {
        const batch = Array.from({ length: 10 }, () => {
          const uuid = crypto.randomUUID()
          uuids.push(uuid)
          return { event: 'step', uuid, distinct_id: `d${step}` }
        })
        expect((await fetch(`${svc.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) })).status).toBe(200)
        const m = await read()
        expect(m.pipeline_backlog_records).toBe(step)
        expect(m.pipeline_wal_unflushed_bytes).toBeGreaterThan(previous.bytes)
        expect(m['pipeline_consumer_lag_records{consumer="store"}']).toBe(step)
        expect(m['capture_received_events_total{endpoint="batch"}']).toBe(step * 10)
        expect(m['store_up{store="clickhouse"}']).toBe(0)
        previous = { records: m.pipeline_backlog_records!, bytes: m.pipeline_wal_unflushed_bytes! }
      }
      // a refused connection is an outage, not bad data
      const counted = await eventually(async () => ((await read())['pipeline_flush_failures_total{consumer="store",reason="unreachable"}'] ?? 0) > 0, 10_000)
      expect(counted).toBe(true)
      const failures = await read()
      expect(Object.keys(failures).filter((k) => k.startsWith('pipeline_flush_failures_total{') && !k.includes('reason="unreachable"'))).toEqual([])
      // a summary of the outage (interval shortened for the test; a minute by default)
      const summarised = await eventually(async () => logLines(svc.logs()).some((l) => l.outage === 'ongoing'), 10_000)
      expect(summarised).toBe(true)

      ch.server = await startClickHouse({ httpPort, tcpPort })
      const drained = await eventually(async () => {
        const m = await read()
        return m.pipeline_backlog_records === 0 && m.pipeline_wal_unflushed_bytes === 0 && m['store_up{store="clickhouse"}'] === 1
      }, 60_000)
      expect(drained).toBe(true)
      const m = await read()
      expect(m['pipeline_consumer_lag_records{consumer="store"}']).toBe(0)
      expect(m['pipeline_consumer_lag_records{consumer="learn"}']).toBe(0)
      expect(m.pipeline_ring_depth_events).toBe(0)
      expect(m.process_resident_memory_bytes).toBeGreaterThan(0)
      expect(Object.keys(m).some((k) => k.startsWith('nodejs_'))).toBe(false)
      // counted right after the drain, before a background merge of the ReplacingMergeTree could fold a duplicate
      const stored = await fetch(`${clickhouseUrl.replace(`/${database}`, '')}/?query=${encodeURIComponent(`SELECT count(), uniqExact(uuid) FROM ${database}.events FORMAT TSV`)}`)
      expect((await stored.text()).trim()).toBe('30\t30')

      const outage = logLines(svc.logs()).filter((l) => l.store === 'clickhouse' && typeof l.outage === 'string')
      const started = outage.filter((l) => l.outage === 'started')
      expect(started.length).toBe(1)
      expect(started[0]).toMatchObject({ level: 'warn', consumer: 'store', reason: 'unreachable' })
      const ongoing = outage.find((l) => l.outage === 'ongoing')!
      expect(ongoing.attempts as number).toBeGreaterThan(0)
      expect(ongoing.backlogRecords as number).toBeGreaterThan(0)
      expect(typeof ongoing.oldestRecordAgeSeconds).toBe('number')
      expect(outage.filter((l) => l.outage === 'ended').length).toBe(1)
      const drainLines = outage.filter((l) => l.outage === 'drained')
      expect(drainLines.length).toBe(1)
      expect(drainLines[0].drainedEvents).toBe(30)
      expect(drainLines[0].drainedRecords).toBe(3)
    } finally {
      await svc.stop()
      await ch.server?.destroy()
    }
  })

  test('SIGTERM during an outage: the exit line names the failing store, and the process exits 0', async () => {
    const port = await freePort()
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    const svc = await spawnService({ ...env, CLICKHOUSE_URL: `http://default:@127.0.0.1:${port}/nowhere`, FLUSH_INTERVAL_MS: '50', SHUTDOWN_TIMEOUT_MS: '3000', LOG_LEVEL: 'info' })
    let code: number
    try {
      const r = await fetch(`${svc.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'held', distinct_id: 'd' }) })
      expect(r.status).toBe(200)
      expect(await eventually(async () => logLines(svc.logs()).some((l) => l.outage === 'started'), 10_000)).toBe(true)
    } finally {
      code = await svc.stop()
    }
    expect(code).toBe(0)
    const exit = logLines(svc.logs()).find((l) => l.msg.startsWith('drain incomplete'))
    expect(exit).toBeDefined()
    expect(exit!.msg).toContain('clickhouse failing')
    expect(exit!.failingStores).toEqual(['clickhouse'])
    expect((exit!.failing as string[])[0]).toStartWith('clickhouse unreachable')
  })
})
