import { describe, expect, test } from 'bun:test'
import { Counter, Registry } from 'prom-client'
import { TalliedCounter } from './tallied-counter'

const counterIn = (registry: Registry, collect?: () => void) =>
  new Counter({ name: 'things_total', help: 'things', labelNames: ['kind'] as const, registers: [registry], ...(collect ? { collect } : {}) })

describe('a tallied counter', () => {
  test('what its tallies count is in the counter whenever it is read, and only once', async () => {
    const registry = new Registry()
    const tallied = new TalliedCounter(counterIn(registry))
    const a = tallied.of('a', { kind: 'a' })
    a.inc()
    a.inc(4)
    tallied.of('b', { kind: 'b' }).inc()
    expect(tallied.of('a', { kind: 'a' })).toBe(a)
    expect(await registry.metrics()).toContain('things_total{kind="a"} 5')
    a.inc()
    const text = await registry.metrics()
    expect(text).toContain('things_total{kind="a"} 6')
    expect(text).toContain('things_total{kind="b"} 1')
  })

  test('a counter with a collect of its own still runs it', async () => {
    const registry = new Registry()
    let collected = 0
    const tallied = new TalliedCounter(counterIn(registry, () => void collected++))
    tallied.of('a', { kind: 'a' }).inc()
    expect(await registry.metrics()).toContain('things_total{kind="a"} 1')
    expect(collected).toBe(1)
  })

  test('past its label sets, increments go to the counter directly and are still counted', async () => {
    const registry = new Registry()
    const tallied = new TalliedCounter(counterIn(registry), 2)
    for (let i = 0; i < 5; i++) tallied.of(`k${i}`, { kind: `k${i}` }).inc(i + 1)
    const text = await registry.metrics()
    for (let i = 0; i < 5; i++) expect(text).toContain(`things_total{kind="k${i}"} ${i + 1}`)
  })
})
