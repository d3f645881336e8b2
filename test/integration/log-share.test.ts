// A project's share of the write-ahead log (WAL_PROJECT_SHARE of WAL_MAX_BYTES): with the event store down, one
// project sending gzip bodies that decode large gets 429 past its share while another project keeps capturing,
// /_ready's log check stays "ok" (the node is not full), and the count survives a restart.
import { describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { freePort, runCli, spawnService } from '../helpers/spawn-service'
import { BASE, freshEnv, learned, PROJECT_KEY, startStack } from '../helpers/stack'

const MiB = 1024 * 1024

/** ~500 KB of JSON (counting numbers: gzip makes it a few times smaller, within the expansion ratio). */
function body(token: string): Uint8Array {
  let text = ''
  for (let i = 0; text.length < 500_000; i++) text += `${i * 7} `
  return gzipSync(JSON.stringify({ api_key: token, batch: [{ event: 'e', distinct_id: 'd', properties: { text } }] }))
}

describe('a project past its share of the log', () => {
  test('gets 429 rate_limited while another project captures and /_ready says the log is ok; after a restart too', async () => {
    // an event store that does not answer: everything accepted waits in the log
    const clickhouseUrl = `http://default:@127.0.0.1:${await freePort()}/nowhere`
    const env = { ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), CLICKHOUSE_URL: clickhouseUrl, WAL_MAX_BYTES: String(8 * MiB), LOG_LEVEL: 'warn' }
    let svc = await spawnService(env)
    try {
      const created = await runCli(['project', 'create', '--name', 'Neighbour'], env)
      expect(created.code).toBe(0)
      const neighbour = JSON.parse(created.stdout) as { api_token: string }
      // a new project's token reaches the running service's cache within a few seconds
      for (let tries = 0; ; tries++) {
        const r = await fetch(`${svc.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: neighbour.api_token, event: 'hello', distinct_id: 'n' }) })
        if (r.status === 200) break
        if (tries > 100) throw new Error(`the neighbour's token is still refused: ${r.status}`)
        await Bun.sleep(100)
      }
      const flood = body(PROJECT_KEY)
      const statuses: number[] = []
      let refusal: Response | null = null
      for (let i = 0; i < 16; i++) {
        const r = await fetch(`${svc.url}/batch/`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body: flood })
        statuses.push(r.status)
        if (r.status === 429) refusal = r
        else await r.arrayBuffer()
      }
      // 2 MiB share: four requests of ~500 KB decoded, then 429
      console.log(`[log share] ${flood.length} B of gzip a request: ${statuses.join(' ')}`)
      expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200])
      expect(statuses.slice(5)).toEqual(Array(11).fill(429))
      expect(refusal!.headers.get('retry-after')).toBe('1')
      expect(await refusal!.json()).toMatchObject({ type: 'throttled_error', code: 'rate_limited' })
      const other = await fetch(`${svc.url}/batch/`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body: body(neighbour.api_token) })
      expect(other.status).toBe(200)
      const ready = (await (await fetch(`${svc.url}/_ready`)).json()) as { checks: Record<string, string> }
      expect(ready.checks.write_ahead_log).toBe('ok')
      const metrics = await (await fetch(`${svc.url}/metrics`)).text()
      expect(Number(/^capture_requests_rejected_total\{code="project_log_share"\} (\d+)/m.exec(metrics)?.[1])).toBe(statuses.filter((s) => s === 429).length)
      expect(Number(/^pipeline_wal_largest_project_bytes (\d+)/m.exec(metrics)?.[1])).toBeLessThanOrEqual(2 * MiB)
      expect(svc.logs()).toContain('over its share of the write-ahead log')

      // after a restart the log still holds them: the project is still at its share, the neighbour still has room
      await svc.kill()
      svc = await spawnService(env)
      const again = await fetch(`${svc.url}/batch/`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body: flood })
      expect(again.status).toBe(429)
      const neighbourAgain = await fetch(`${svc.url}/batch/`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body: body(neighbour.api_token) })
      expect(neighbourAgain.status).toBe(200)
    } finally {
      await svc.kill()
    }
  }, 120_000)
})

describe('a project within its share of the log', () => {
  test('its count shrinks as the log is flushed: sent one after the other, requests beyond the share are all taken', async () => {
    // a 1 MiB log: a 256 KiB share, each request ~500 KB decoded (alone, it is taken when the project holds nothing)
    const stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { WAL_MAX_BYTES: MiB, FLUSH_INTERVAL_MS: 20 })
    try {
      const flood = body(PROJECT_KEY)
      for (let i = 0; i < 4; i++) {
        const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body: flood }))
        expect(r.status).toBe(200)
        expect(stack.services.captureLog.shares.bytesOf(1)).toBeGreaterThan(400_000)
        await learned(stack)
        expect(stack.services.captureLog.shares.bytesOf(1)).toBe(0)
      }
    } finally {
      await stack.close()
    }
  }, 60_000)
})
