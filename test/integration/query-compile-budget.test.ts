// Queries made to be expensive to compile, sent over HTTP to a service on the embedded stores while /_health and
// capture are called back to back. Before the compiler had a budget, the 574-byte alias chain below held every
// tenant's /_health, /decide and capture for 15–27 s (and grew the process to 1.9 GB), a flat 49,000-term sum or
// 13,333 ANDs answered 500 (a stack overflow in the compiler). Each is now answered 200 or 400 at once, compiled
// on a thread of its own, and the other endpoints keep answering meanwhile; /metrics counts the refusals by limit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

// Generous for a loaded 2-core machine, yet far below the seconds the alias chain held the thread.
const RESPONSIVE_MS = 1000

const aliasChain = (levels: number) =>
  `select event AS a0, ${Array.from({ length: levels }, (_, i) => `concat(a${i}, a${i}) AS a${i + 1}`).join(', ')} from events`

const ATTACKS: Record<string, string> = {
  'alias chain, 23 levels': aliasChain(23),
  'alias chain, 20 levels': aliasChain(20),
  'flat sum of 49,000 terms': `select ${Array(49_000).fill('1').join('+')} from events`,
  '13,333 ANDs': `select count() from events where ${Array(13_333).fill('1 = 1').join(' AND ')}`,
  '7,000 ORs': `select count() from events where ${Array(7_000).fill("event = 'x'").join(' OR ')}`,
  'nested calls': `select ${'lower('.repeat(5_000)}event${')'.repeat(5_000)} from events`,
  'wide statement': `select ${Array.from({ length: 100 }, (_, i) => `concat(${Array(90).fill('timestamp').join(', ')}) AS c${i}`).join(', ')} from events`,
}

describe('query API: compiling within a budget, over HTTP on the embedded store', () => {
  let svc: ServiceProcess
  beforeAll(async () => {
    svc = await spawnService(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' }))
  }, 120_000)
  afterAll(async () => {
    await svc?.stop()
  })

  const query = async (text: string): Promise<{ status: number; body: any; ms: number }> => {
    const started = performance.now()
    const r = await fetch(`${svc.url}/api/projects/1/query/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: { kind: 'HogQLQuery', query: text } }),
    })
    const body = await r.json()
    return { status: r.status, body, ms: performance.now() - started }
  }

  const timed = async (request: () => Promise<Response>): Promise<number> => {
    const started = performance.now()
    const r = await request()
    expect(r.status).toBe(200)
    await r.arrayBuffer()
    return performance.now() - started
  }

  test('each attack is answered 200 or 400 while /_health and capture keep answering', async () => {
    expect((await query('select count() from events')).status).toBe(200) // warm
    let done = false
    const answers = Promise.all(Object.entries(ATTACKS).map(async ([name, text]) => [name, await query(text)] as const)).finally(() => (done = true))
    const latencies: number[] = []
    for (let i = 0; !done || latencies.length < 10; i++) {
      latencies.push(await timed(() => fetch(`${svc.url}/_health`)))
      latencies.push(await timed(() => fetch(`${svc.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'during', distinct_id: `d${i}` }) })))
    }
    for (const [name, answer] of await answers) {
      console.log(`${name}: ${answer.status} in ${answer.ms.toFixed(0)} ms — ${answer.body.detail ?? `${answer.body.results?.length} rows`}`)
      expect([200, 400]).toContain(answer.status)
      if (answer.status === 400) expect(answer.body).toMatchObject({ type: 'validation_error', code: 'invalid_query', attr: 'query' })
    }
    const answered = Object.fromEntries(await answers)
    expect(answered['alias chain, 23 levels'].body.detail).toMatch(/too complex: its compiled statement would be larger than 262144 bytes/)
    expect(answered['flat sum of 49,000 terms'].body.detail).toMatch(/more than 30000 tokens/)
    expect(answered['7,000 ORs'].status).toBe(200)
    const sorted = [...latencies].sort((a, b) => a - b)
    console.log(`/_health and capture: ${latencies.length} calls, median ${sorted[sorted.length >> 1].toFixed(1)} ms, max ${sorted[sorted.length - 1].toFixed(1)} ms`)
    expect(sorted[sorted.length - 1]).toBeLessThan(RESPONSIVE_MS)
    // the service is whole: a plain query still answers, and its memory did not balloon
    expect((await query('select count() from events')).status).toBe(200)
    const metrics = await (await fetch(`${svc.url}/metrics`)).text()
    expect(metrics).toMatch(/query_compile_refused_total\{limit="statement"\} [1-9]/)
    expect(metrics).toMatch(/query_compile_refused_total\{limit="tokens"\} [1-9]/)
    expect(metrics).toMatch(/query_compile_seconds_count [1-9]/)
    console.log(metrics.split('\n').filter((line) => line.startsWith('query_compile_seconds')).join('\n'))
    const rss = Number(/process_resident_memory_bytes (\d+)/.exec(metrics)?.[1])
    console.log(`resident memory after the attacks: ${(rss / 2 ** 20).toFixed(0)} MiB`)
    expect(rss).toBeLessThan(1024 * 2 ** 20) // 1.9 GB before
  }, 120_000)
})
