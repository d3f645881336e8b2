import { describe, expect, test } from 'bun:test'
import { createMetrics } from './metrics'

async function requestCounts(metrics: ReturnType<typeof createMetrics>): Promise<Map<string, number>> {
  const { values } = (await metrics.httpRequests.get()) as { values: { labels: Record<string, unknown>; value: number }[] }
  return new Map(values.map((v) => [`${v.labels.status} ${v.labels.method} ${v.labels.route}`, v.value]))
}

describe('http_requests_total', () => {
  test('each (route, method, status) counts its own requests', async () => {
    const metrics = createMetrics()
    metrics.countHttpRequest('/decide', 'POST', 200)
    metrics.countHttpRequest('/decide', 'POST', 200)
    metrics.countHttpRequest('/decide', 'POST', 429)
    metrics.countHttpRequest('unmatched', 'GET', 404)
    const counts = await requestCounts(metrics)
    expect(counts).toEqual(new Map([['200 POST /decide', 2], ['429 POST /decide', 1], ['404 GET unmatched', 1]]))
    expect(await metrics.registry.metrics()).toContain('http_requests_total{route="/decide",method="POST",status="200"} 2')
  })

  test('past the kept label sets (a client inventing methods), requests are still counted', async () => {
    const metrics = createMetrics()
    for (let i = 0; i < 600; i++) metrics.countHttpRequest('unmatched', `M${i}`, 405)
    metrics.countHttpRequest('unmatched', 'M599', 405)
    const counts = await requestCounts(metrics)
    expect(counts.size).toBe(600)
    expect(counts.get('405 M599 unmatched')).toBe(2)
    expect(counts.get('405 M0 unmatched')).toBe(1)
  })
})
