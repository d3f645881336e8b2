import { describe, expect, test } from 'bun:test'
import { buildEntry, FlagCache, type FlagSource } from './cache'
import type { CachedFlagRow, ProjectFlags } from './repository'

function row(id: number, key: string, extra: Partial<CachedFlagRow> = {}): CachedFlagRow {
  return {
    id,
    team_id: 1,
    key,
    name: '',
    filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    rollout_percentage: null,
    active: true,
    deleted: false,
    ensure_experience_continuity: false,
    version: 1,
    ...extra,
  }
}

/** A Postgres stand-in: per project a version, flags and group types; can be "down" or slow. */
class FakeSource implements FlagSource {
  projects = new Map<number, ProjectFlags>()
  down = false
  loads = 0
  stampsCalls = 0
  gate: Promise<void> | null = null
  notify: ((teamId: number) => void) | null = null

  set(teamId: number, flags: CachedFlagRow[], groupTypes: [number, string][] = []) {
    const version = (this.projects.get(teamId)?.version ?? 0) + 1
    this.projects.set(teamId, { version, flags, groupTypes })
  }

  async load(teamId: number): Promise<ProjectFlags> {
    this.loads++
    const snapshot = this.projects.get(teamId) ?? { version: 0, flags: [], groupTypes: [] }
    if (this.gate) await this.gate
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    return snapshot
  }

  async stamps(teamIds: number[]) {
    this.stampsCalls++
    if (this.down) throw Object.assign(new Error('down'), { code: 'ECONNREFUSED' })
    return teamIds.map((teamId) => ({
      teamId,
      version: this.projects.get(teamId)?.version ?? 0,
      groupTypes: this.projects.get(teamId)?.groupTypes.length ?? 0,
    }))
  }

  async groupTypes(teamId: number): Promise<[number, string][]> {
    this.loads++
    if (this.down) throw Object.assign(new Error('down'), { code: 'ECONNREFUSED' })
    return [...(this.projects.get(teamId)?.groupTypes ?? [])]
  }

  async knownProjects() {
    return [...this.projects.keys()]
  }

  async listen(onChange: (teamId: number) => void) {
    this.notify = onChange
    return async () => {
      this.notify = null
    }
  }
}

const keys = (c: FlagCache, teamId = 1) => c.peek(teamId)?.active.map((f) => f.key)

describe('flag cache', () => {
  test('loads on first use, then answers from memory without a promise', async () => {
    const source = new FakeSource()
    source.set(1, [row(1, 'a'), row(2, 'b', { active: false })])
    const cache = new FlagCache(source, { refreshIntervalMs: 60_000 })
    expect(cache.peek(1)).toBeUndefined()
    const entry = await cache.get(1)
    expect(entry.active.map((f) => f.key)).toEqual(['a'])
    expect(entry.rows.map((r) => r.key)).toEqual(['a', 'b']) // local_evaluation sends inactive flags too
    expect(cache.peek(1)).toBe(entry)
    await cache.get(1)
    expect(source.loads).toBe(1)
  })

  test('preloads known projects and listens at start', async () => {
    const source = new FakeSource()
    source.set(1, [row(1, 'a')])
    source.set(2, [row(2, 'b')])
    const cache = new FlagCache(source, { refreshIntervalMs: 60_000 })
    await cache.start()
    expect(keys(cache, 1)).toEqual(['a'])
    expect(keys(cache, 2)).toEqual(['b'])
    source.set(1, [row(1, 'a'), row(3, 'c')])
    source.notify!(1)
    // a notified change: requests wait for the reload instead of answering stale data
    expect(cache.peek(1)).toBeUndefined()
    expect((await cache.get(1)).active.map((f) => f.key)).toEqual(['a', 'c'])
    await cache.stop()
  })

  test('a write by this process is visible as soon as refresh() resolves', async () => {
    const source = new FakeSource()
    source.set(1, [row(1, 'a')])
    const cache = new FlagCache(source, { refreshIntervalMs: 60_000 })
    await cache.get(1)
    source.set(1, [row(1, 'a', { active: false })])
    await cache.refresh(1)
    expect(keys(cache)).toEqual([])
  })

  test('the periodic check reloads projects whose version or group types changed', async () => {
    const source = new FakeSource()
    source.set(1, [row(1, 'a')])
    const cache = new FlagCache(source, { refreshIntervalMs: 20 })
    await cache.start()
    await cache.get(1)
    source.set(1, [row(1, 'a'), row(2, 'b')])
    const deadline = Date.now() + 2000
    while (Date.now() < deadline && keys(cache)?.length !== 2) await Bun.sleep(5)
    expect(keys(cache)).toEqual(['a', 'b'])
    // group types alone (no flag write) also count
    source.projects.get(1)!.groupTypes = [[0, 'company']]
    while (Date.now() < deadline + 2000 && !cache.peek(1)?.groupTypeIndexes.has('company')) await Bun.sleep(5)
    expect(cache.peek(1)?.groupTypeNames.get(0)).toBe('company')
    await cache.stop()
  })

  test('Postgres down: the stale entry keeps answering, reloads are spaced out, it recovers', async () => {
    const source = new FakeSource()
    source.set(1, [row(1, 'a')])
    const cache = new FlagCache(source, { refreshIntervalMs: 60_000, retryAfterMs: 100 })
    await cache.get(1)
    source.set(1, [row(1, 'a'), row(2, 'b')])
    source.down = true
    cache.invalidate(1)
    const stale = await cache.get(1) // the reload fails: the old entry answers
    expect(stale.active.map((f) => f.key)).toEqual(['a'])
    const loads = source.loads
    for (let i = 0; i < 50; i++) expect(keys(cache)).toEqual(['a'])
    expect(source.loads).toBe(loads) // no reload storm
    source.down = false
    await Bun.sleep(120)
    cache.peek(1) // past retryAfterMs: a request kicks a background reload
    await Bun.sleep(10)
    expect(keys(cache)).toEqual(['a', 'b'])
  })

  test('a project never loaded and Postgres down: get() throws, and does not retry at once', async () => {
    const source = new FakeSource()
    source.down = true
    const cache = new FlagCache(source, { refreshIntervalMs: 60_000, retryAfterMs: 10_000 })
    await expect(cache.get(7)).rejects.toThrow()
    await expect(cache.get(7)).rejects.toThrow()
    expect(source.loads).toBe(1)
  })

  test('a load that started before an invalidation does not make old data look fresh', async () => {
    const source = new FakeSource()
    source.set(1, [row(1, 'a')])
    const cache = new FlagCache(source, { refreshIntervalMs: 60_000 })
    await cache.get(1)
    let open!: () => void
    source.gate = new Promise((r) => (open = r))
    cache.invalidate(1) // load #2 reads the old snapshot and waits at the gate
    source.set(1, [row(1, 'a'), row(2, 'b')])
    cache.invalidate(1) // the write lands while #2 is in flight
    source.gate = null
    open()
    expect((await cache.get(1)).active.map((f) => f.key)).toEqual(['a', 'b'])
  })

  test('unknown group types reload the mapping, at most once per interval', async () => {
    const source = new FakeSource()
    source.set(1, [row(1, 'a')])
    const cache = new FlagCache(source, { refreshIntervalMs: 60_000, groupTypeRefreshMs: 10_000 })
    const before = await cache.get(1)
    source.projects.get(1)!.groupTypes = [[0, 'company']]
    const entry = await cache.refreshGroupTypes(1, ['company'])
    expect(entry?.groupTypeIndexes.get('company')).toBe(0)
    expect(entry?.active[0]).toBe(before.active[0]) // flags are not recompiled for a new group type
    const loads = source.loads
    // another unknown name within the interval: no reload (a flood of made-up names costs nothing)
    await cache.refreshGroupTypes(1, ['team'])
    await cache.refreshGroupTypes(1, ['team'])
    expect(source.loads).toBe(loads)
    await cache.refreshGroupTypes(1, ['company']) // known: nothing to do
    expect(source.loads).toBe(loads)
  })

  test('entries know whether any flag needs experience continuity', async () => {
    const source = new FakeSource()
    source.set(1, [row(1, 'a'), row(2, 'b', { ensure_experience_continuity: true })])
    source.set(2, [row(3, 'c')])
    const cache = new FlagCache(source, { refreshIntervalMs: 60_000 })
    expect((await cache.get(1)).hasContinuityFlags).toBe(true)
    expect((await cache.get(2)).hasContinuityFlags).toBe(false)
  })
})

describe('recompiling what changed', () => {
  test('a reload keeps the compiled form of every flag whose version did not change', () => {
    const row = (id: number, version: number, value = 'pro') => ({
      id,
      team_id: 1,
      key: `flag-${id}`,
      name: '',
      filters: { groups: [{ properties: [{ key: 'plan', value, type: 'person' }], rollout_percentage: 100 }] },
      rollout_percentage: null,
      active: true,
      deleted: false,
      ensure_experience_continuity: false,
      version,
    })
    const first = buildEntry(1, { version: 1, flags: [row(1, 1), row(2, 1), row(3, 1)], groupTypes: [] })
    const second = buildEntry(1, { version: 2, flags: [row(1, 1), row(2, 2, 'team'), row(3, 1)], groupTypes: [] }, Date.now(), first)
    expect(second.active[0]).toBe(first.active[0]!) // same object: not compiled again
    expect(second.active[2]).toBe(first.active[2]!)
    expect(second.active[1]).not.toBe(first.active[1]!) // the written one is compiled anew
    expect(second.active[1]!.version).toBe(2)
  })
})

describe('the client config a project entry carries', () => {
  test('surveys and exception autocapture turn their members on; the same settings keep the same object', () => {
    const off = buildEntry(1, { version: 1, flags: [], groupTypes: [] })
    expect(off.capabilities).toMatchObject({ surveys: false, autocaptureExceptions: false })
    const on = buildEntry(1, { version: 2, flags: [], groupTypes: [], surveys: true, autocaptureExceptions: true }, Date.now(), off)
    expect(on.capabilities).toMatchObject({ surveys: true, autocaptureExceptions: true, errorTracking: { autocaptureExceptions: true }, sessionRecording: false })
    const again = buildEntry(1, { version: 3, flags: [], groupTypes: [], surveys: true, autocaptureExceptions: true }, Date.now(), on)
    expect(again.capabilities).toBe(on.capabilities)
  })
})
