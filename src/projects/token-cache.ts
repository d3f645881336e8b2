// Project API keys → project ids, answered from memory.
//
// The cache holds a snapshot of every project's key hash. A key missing from it triggers a reload, at most
// one at a time and at most once per MISS_RELOAD_INTERVAL_MS, so a flood of bad keys costs Postgres at most
// one query a second; misses a reload has confirmed are remembered in a bounded negative cache. When Postgres is down the snapshot keeps answering for known keys; an unknown
// key then gets 503 fetch_team_fail (docs/compatibility.md#public-key-errors).
//
// Memory is bounded in bytes, not only in entries: a key longer than MAX_KEY_LENGTH is answered 'unknown' before it
// is hashed or remembered, so each memo entry holds at most MAX_KEY_LENGTH + 71 characters.
// A token reset elsewhere reaches this cache through reload() (KeyChangeWatcher).
import type { Sql } from 'postgres'
import { hashKey, plausibleKey } from './keys'
import { errors } from '../http/errors'

export interface TokenCacheOptions {
  reloadEveryMs?: number
  missReloadIntervalMs?: number
  negativeTtlMs?: number
  negativeMax?: number
}

export type TokenLookup = number | 'unknown' | 'unavailable'

export class ProjectTokenCache {
  private byHash = new Map<string, number>()
  /** projects created before tokens were kept in clear: the first request presenting their token records it */
  private tokenUnknown = new Set<number>()
  /** a token's hash, and the project the snapshot of `generation` gave it: a known key is one map read */
  private readonly slots = new Map<string, { hash: string; projectId: number | undefined; generation: number }>()
  /** changes whenever the snapshot does (a reload, a project added) */
  private generation = 0
  private readonly negative = new Map<string, number>()
  private reloadStartedAt = 0
  private lastReloadOk = false
  private reloading: Promise<boolean> | null = null
  private timer: ReturnType<typeof setInterval> | undefined
  private readonly reloadEveryMs: number
  private readonly missReloadIntervalMs: number
  private readonly negativeTtlMs: number
  private readonly negativeMax: number

  constructor(
    private readonly sql: Sql,
    options: TokenCacheOptions = {},
  ) {
    this.reloadEveryMs = options.reloadEveryMs ?? 60_000
    this.missReloadIntervalMs = options.missReloadIntervalMs ?? 1_000
    this.negativeTtlMs = options.negativeTtlMs ?? 10_000
    this.negativeMax = options.negativeMax ?? 10_000
  }

  async start(): Promise<void> {
    await this.reload()
    this.timer = setInterval(() => void this.reload(), this.reloadEveryMs)
    this.timer.unref?.()
  }

  stop(): void {
    clearInterval(this.timer)
  }

  /** Fast path: the project id for a token already known, without a promise. */
  cached(token: string): number | undefined {
    if (!plausibleKey(token)) return undefined
    const slot = this.slot(token)
    if (slot.generation !== this.generation) {
      slot.projectId = this.byHash.get(slot.hash)
      slot.generation = this.generation
    }
    const id = slot.projectId
    if (id !== undefined && this.tokenUnknown.size) this.learnToken(token, id)
    return id
  }

  /** The project id, 'unknown' for a key no project has, or 'unavailable' when that cannot be told. */
  async lookup(token: string): Promise<TokenLookup> {
    if (!plausibleKey(token)) return 'unknown'
    const hash = this.hash(token)
    const hit = this.byHash.get(hash)
    if (hit !== undefined) {
      if (this.tokenUnknown.size) this.learnToken(token, hit)
      return hit
    }
    const now = Date.now()
    const missedAt = this.negative.get(hash)
    if (missedAt !== undefined && now - missedAt < this.negativeTtlMs && this.lastReloadOk) return 'unknown'
    // Only a reload that began after this miss can tell that the key does not exist (a running one may
    // predate its project): only then is the miss remembered. Within the interval a miss is answered from the
    // snapshot and asked again next time, so a project created elsewhere is refused for a second at most.
    let fresh = false
    if (this.reloading) {
      const startedAt = this.reloadStartedAt
      await this.reloading
      fresh = startedAt >= now
    } else if (now - this.reloadStartedAt >= this.missReloadIntervalMs) {
      await this.reload()
      fresh = true
    }
    const after = this.byHash.get(hash)
    if (after !== undefined) {
      if (this.tokenUnknown.size) this.learnToken(token, after)
      return after
    }
    if (!this.lastReloadOk) return 'unavailable'
    if (fresh) this.remember(hash, now)
    return 'unknown'
  }

  /** lookup() as the capture and decide routes need it: an id, or the public endpoints' errors. */
  async resolve(token: string): Promise<number> {
    const found = await this.lookup(token)
    if (found === 'unknown') throw errors.invalidApiKey()
    if (found === 'unavailable') throw errors.fetchTeamFail()
    return found
  }

  /** A project created in this process is known at once. */
  add(token: string, projectId: number): void {
    const hash = this.hash(token)
    this.byHash.set(hash, projectId)
    this.generation++
    this.negative.delete(hash)
  }

  /** A token was reset (here or elsewhere): drop the old one from the snapshot now, whatever the interval. */
  async invalidate(): Promise<void> {
    if (this.reloading) await this.reloading
    await this.reload()
  }

  /** Record the clear token of a project migrated from hashed tokens, once, off the request path. */
  private learnToken(token: string, projectId: number): void {
    if (!this.tokenUnknown.delete(projectId)) return
    this.sql`
      update projects set api_token = ${token}
      where id = ${projectId} and api_token is null and api_token_hash = ${hashKey(token)}`.catch(() => {
      this.tokenUnknown.add(projectId)
    })
  }

  private hash(token: string): string {
    return this.slot(token).hash
  }

  private slot(token: string): { hash: string; projectId: number | undefined; generation: number } {
    let slot = this.slots.get(token)
    if (slot === undefined) {
      slot = { hash: hashKey(token), projectId: undefined, generation: -1 }
      if (this.slots.size >= this.negativeMax) this.slots.delete(this.slots.keys().next().value!)
      this.slots.set(token, slot)
    }
    return slot
  }

  private remember(hash: string, now: number): void {
    if (this.negative.size >= this.negativeMax) this.negative.delete(this.negative.keys().next().value!)
    this.negative.set(hash, now)
  }

  private reload(): Promise<boolean> {
    if (this.reloading) return this.reloading
    this.reloadStartedAt = Date.now()
    this.reloading = (async () => {
      try {
        const rows = await this.sql<{ id: number; api_token_hash: string; token_unknown: boolean }[]>`
          select id, api_token_hash, api_token is null as token_unknown from projects`
        const next = new Map<string, number>()
        const unknown = new Set<number>()
        for (const r of rows) {
          next.set(r.api_token_hash, r.id)
          if (r.token_unknown) unknown.add(r.id)
        }
        this.byHash = next
        this.generation++
        this.tokenUnknown = unknown
        this.lastReloadOk = true
      } catch {
        this.lastReloadOk = false
      } finally {
        this.reloading = null
      }
      return this.lastReloadOk
    })()
    return this.reloading
  }
}
