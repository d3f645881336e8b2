// The serving thread's promises about analytics requests, whatever the thread does: an answer at the deadline
// (504 with Retry-After, the work cancelled there), a 503 when the thread dies (and a new thread for the next
// request), a 503 past the thread's queue, a 499 when the client leaves.
import { describe, expect, test } from 'bun:test'
import { configWith } from '../config'
import { ApiError } from '../http/errors'
import { silentLogger } from '../log'
import { createMetrics } from '../ops/metrics'
import { AnalyticsThreads } from './threads'

const MISBEHAVING = new URL('../../test/helpers/misbehaving-analytics-worker.ts', import.meta.url)

function threadsOf(overrides: Record<string, string | number>) {
  const metrics = createMetrics()
  const config = configWith({ QUERY_TIMEOUT_MS: 200, ...overrides })
  return { t: new AnalyticsThreads({ config, log: silentLogger, metrics, workerUrl: MISBEHAVING, graceMs: 100 }), metrics }
}

async function threads(overrides: Record<string, string | number> = {}) {
  const started = threadsOf(overrides)
  await started.t.start()
  return started
}

const refusal = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => e as ApiError)

describe('analytics threads, seen from the serving thread', () => {
  test('a thread that does not answer: 504 query_timeout with Retry-After at QUERY_TIMEOUT_MS + the grace, and the work is cancelled there', async () => {
    const { t, metrics } = await threads()
    const started = performance.now()
    const error = await refusal(t.offload('query.run', [{ id: 1, timezone: 'UTC', weekStartDay: 0 }, { kind: 'HogQLQuery', query: 'SELECT 1' }, null]))
    const took = performance.now() - started
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 504, code: 'query_timeout', headers: { 'retry-after': '5' } })
    expect(took).toBeGreaterThanOrEqual(290)
    await Bun.sleep(50)
    const text = await metrics.registry.metrics()
    expect(text).toContain('op="seen:query.run"')
    expect(text).toMatch(/op="cancelled:\d+"/)
    expect(text).toContain('analytics_requests_total{op="query.run",outcome="timeout"} 1')
    expect(text).toContain('analytics_requests_in_flight 0')
    await t.close(1000)
  })

  test('a client that leaves: 499 at once, the work cancelled', async () => {
    const { t, metrics } = await threads({ QUERY_TIMEOUT_MS: 60_000 })
    const request = new Request('http://localhost/api/projects/1/query/', { signal: AbortSignal.timeout(50) })
    const error = await refusal(t.offload('events.list', [{ teamId: 1 }, 10, 'http://localhost/'], { request }))
    expect(error).toMatchObject({ status: 499, code: 'client_closed' })
    await Bun.sleep(50)
    expect(await metrics.registry.metrics()).toMatch(/op="cancelled:\d+"/)
    await t.close(1000)
  })

  test('past ANALYTICS_QUEUE_PER_THREAD requests on the thread: 503 analytics_busy with Retry-After, before anything is queued', async () => {
    const { t } = await threads({ QUERY_TIMEOUT_MS: 60_000, ANALYTICS_QUEUE_PER_THREAD: 2 })
    const leaving = new AbortController()
    const request = new Request('http://localhost/', { signal: leaving.signal })
    const held = [t.offload('slots.use', undefined, { request }), t.offload('slots.use', undefined, { request })].map(refusal)
    const error = await refusal(t.offload('slots.use', undefined))
    expect(error).toMatchObject({ status: 503, code: 'analytics_busy', headers: { 'retry-after': '2' } })
    leaving.abort()
    await Promise.all(held)
    await t.close(1000)
  })

  test('a thread that dies: its requests answered 503 analytics_unavailable, and the next request gets a new thread', async () => {
    const { t, metrics } = await threads({ QUERY_TIMEOUT_MS: 60_000, LOG_LEVEL: 'fatal' })
    const error = await refusal(t.offload('slots.use', undefined))
    expect(error).toMatchObject({ status: 503, code: 'analytics_unavailable', headers: { 'retry-after': '1' } })
    expect(await metrics.registry.metrics()).toContain('analytics_requests_total{op="slots.use",outcome="thread_failed"} 1')
    // the new thread dies too (the same misbehaving entry), and is answered the same way: never a hang
    expect(await refusal(t.offload('slots.use', undefined))).toMatchObject({ status: 503 })
    await t.close(1000)
  })

  test('a thread that cannot open its stores: the boot fails naming the cause; a request later tries a new thread and gets 503, never a hang', async () => {
    const { t } = threadsOf({ QUERY_TIMEOUT_MS: 60_000, LOG_LEVEL: 'error' })
    expect(t.start()).rejects.toThrow('the analytics thread could not start: the store refused the connection')
    await Bun.sleep(50)
    const error = await refusal(t.offload('slots.use', undefined))
    expect(error).toMatchObject({ status: 503, code: 'analytics_unavailable', headers: { 'retry-after': '5' } })
    expect(error?.detail).toContain('the store refused the connection')
    await t.close(1000)
  })
})
