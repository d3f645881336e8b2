// What decoding capture bodies may cost before their key is known: a key in the query string is checked before
// the body is decoded, and the decoded bytes per client address per second are bounded
// (CAPTURE_REFUSED_DECODE_BYTES_PER_SECOND): senders of bodies that expand to 19 MB under an unknown key get 429 before
// decoding, and another tenant's /decide keeps its pace.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PROJECT_KEY } from '../helpers/stack'

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** ~19 MB of batch JSON under `key` that gzip makes ~55 times smaller (within the expansion ratio). */
function expandingBody(key: string): Uint8Array {
  let x = 1
  const parts: string[] = []
  for (let length = 0; length < 19_000_000; ) {
    x = (x * 1103515245 + 12345) >>> 0
    const event = `{"event":"e","distinct_id":"d${x % 1000}","properties":{"v":"${'ab'.repeat(100)}${x % 1000}"}},`
    parts.push(event)
    length += event.length
  }
  return gzipSync(`{"api_key":"${key}","batch":[${parts.join('')}{"event":"e","distinct_id":"d"}]}`)
}

async function metric(url: string, line: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const found = text.split('\n').find((l) => l.startsWith(line))
  return found ? Number(found.split(' ').pop()) : 0
}

async function decideLatencies(url: string, ms: number): Promise<number[]> {
  const out: number[] = []
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const start = performance.now()
    const r = await fetch(`${url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: 'victim' }) })
    expect(r.status).toBe(200)
    await r.arrayBuffer()
    out.push(performance.now() - start)
    await Bun.sleep(5)
  }
  return out
}

describe('decoding before the key', () => {
  let svc: ServiceProcess
  let body: Uint8Array
  beforeAll(async () => {
    svc = await spawnService({ ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), LOG_LEVEL: 'warn' })
    body = expandingBody('phc_not_a_project_0001')
  })
  afterAll(() => svc?.stop())

  test('an unknown key in the query string is answered without decoding the body', async () => {
    const decodedBefore = await metric(svc.url, 'capture_requests_total{encoding="gzip",via="body"}')
    const times: number[] = []
    for (let i = 0; i < 5; i++) {
      const start = performance.now()
      const r = await fetch(`${svc.url}/batch/?token=phc_not_a_project_0001`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body })
      times.push(performance.now() - start)
      expect(r.status).toBe(401)
      expect(((await r.json()) as { code: string }).code).toBe('invalid_api_key')
    }
    // nothing was decoded (capture_requests_total counts decoded requests)
    expect(await metric(svc.url, 'capture_requests_total{encoding="gzip",via="body"}')).toBe(decodedBefore)
    // a known key in the query string: the body is decoded and captured as before
    const ok = await fetch(`${svc.url}/capture/?token=${PROJECT_KEY}`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'q', distinct_id: 'q' }) })
    expect(ok.status).toBe(200)
    console.log(`[decode budget] ${body.length} B of gzip (19 MB decoded) with ?token= unknown: 401 in ${median(times).toFixed(1)} ms (median)`)
  }, 60_000)

  test('four senders of 19 MB-expanding bodies under an unknown key: 429 past the address budget; /decide keeps its pace', async () => {
    const baseline = await decideLatencies(svc.url, 1500)
    let stop = false
    const answers = new Map<number, number>()
    const started = Date.now()
    const senders = Array.from({ length: 4 }, async () => {
      while (!stop) {
        const r = await fetch(`${svc.url}/batch/`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body })
        answers.set(r.status, (answers.get(r.status) ?? 0) + 1)
        await r.arrayBuffer()
      }
    })
    const attacked = await decideLatencies(svc.url, 4000)
    stop = true
    await Promise.all(senders)
    const seconds = (Date.now() - started) / 1000
    const decoded = answers.get(401) ?? 0
    console.log(
      `[decode budget] 4 senders for ${seconds.toFixed(1)} s: ${decoded} decoded (401), ${answers.get(429) ?? 0} refused before decoding (429); ` +
        `/decide p50 ${median(baseline).toFixed(1)} ms alone, ${median(attacked).toFixed(1)} ms under attack`,
    )
    expect([...answers.keys()].sort()).toEqual([401, 429])
    // 8 MiB a second: some 0.45 bodies of 19 MB a second, plus one each sender may start in debt (generous bound)
    expect(decoded).toBeLessThanOrEqual(Math.ceil(seconds * 0.5) + 8)
    expect(await metric(svc.url, 'capture_requests_rejected_total{code="decode_budget"}')).toBe(answers.get(429)!)
  }, 60_000)
})
