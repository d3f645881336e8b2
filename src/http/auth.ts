// Personal API keys (Authorization: Bearer phx_…) for the private API, and project access checks.
import type { Sql } from 'postgres'
import { isConnectionError } from '../db/postgres'
import { hashKey, plausibleKey, sameHash } from '../projects/keys'
import { currentProjectId, projectOfUser, type ProjectRow } from '../projects/repository'
import { ApiError, errors } from './errors'

export interface Principal {
  userId: number
  userUuid: string
  keyId: string
}

interface CachedKey {
  secureValue: string
  principal: Principal
  expiresAt: number
}

const CACHE_TTL_MS = 10_000
const CACHE_MAX = 10_000
/** Unknown keys are remembered this long, so a flood of bad keys costs one query per key, not per request. */
const NEGATIVE_TTL_MS = 2_000
const LAST_USED_EVERY_MS = 60 * 60 * 1000
const BEARER = /^Bearer\s+(\S.*)$/

export interface KeyCandidate {
  key: string
  source: string
}

/** Where PostHog accepts a personal key: the Authorization header, then ?personal_api_key=. */
export function findPersonalKey(authorization: string | undefined | null, query: URLSearchParams | null): KeyCandidate | null {
  if (authorization) {
    const match = BEARER.exec(authorization)
    if (match) return { key: match[1].trim(), source: 'Authorization header' }
  }
  const fromQuery = query?.get('personal_api_key')
  if (fromQuery) return { key: fromQuery.trim(), source: 'query string' }
  return null
}

export class PersonalKeyAuth {
  private readonly cache = new Map<string, CachedKey>()
  /** hashes of keys Postgres did not know, and when: bounded in count (and so in bytes: hashes are fixed-size) */
  private readonly unknown = new Map<string, number>()
  private readonly lastUsedWritten = new Map<string, number>()

  constructor(private readonly sql: Sql) {}

  /** The principal behind a request's personal key; 401 when absent or unknown, 503 when Postgres is down. */
  async authenticate(candidate: KeyCandidate | null): Promise<Principal> {
    if (!candidate || !candidate.key) throw errors.notAuthenticated()
    if (!plausibleKey(candidate.key)) throw errors.invalidPersonalKey(candidate.source)
    const secureValue = hashKey(candidate.key)
    const now = Date.now()
    const cached = this.cache.get(secureValue)
    if (cached && cached.expiresAt > now && sameHash(cached.secureValue, secureValue)) return cached.principal
    const missedAt = this.unknown.get(secureValue)
    if (missedAt !== undefined && now - missedAt < NEGATIVE_TTL_MS) throw errors.invalidPersonalKey(candidate.source)

    let row: { id: string; user_id: number; uuid: string; secure_value: string; last_used_at: Date | null } | undefined
    try {
      ;[row] = await this.sql<typeof row[]>`
        select k.id, k.user_id, u.uuid, k.secure_value, k.last_used_at
        from personal_api_keys k join users u on u.id = k.user_id
        where k.secure_value = ${secureValue} and u.is_active`
    } catch (error) {
      if (cached && isConnectionError(error)) return cached.principal // stale beats down
      if (isConnectionError(error)) throw errors.databaseUnavailable()
      throw error
    }
    if (!row || !sameHash(row.secure_value, secureValue)) {
      if (this.unknown.size >= CACHE_MAX) this.unknown.delete(this.unknown.keys().next().value!)
      this.unknown.set(secureValue, now)
      throw errors.invalidPersonalKey(candidate.source)
    }
    const principal: Principal = { userId: row.user_id, userUuid: row.uuid, keyId: row.id }
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!)
    this.cache.set(secureValue, { secureValue, principal, expiresAt: now + CACHE_TTL_MS })
    this.touch(row.id, row.last_used_at, now)
    return principal
  }

  /** Record last use at most once an hour per key, off the request path. */
  private touch(keyId: string, lastUsedAt: Date | null, now: number): void {
    const written = this.lastUsedWritten.get(keyId) ?? lastUsedAt?.getTime() ?? 0
    if (now - written < LAST_USED_EVERY_MS) return
    this.lastUsedWritten.set(keyId, now)
    this.sql`update personal_api_keys set last_used_at = now() where id = ${keyId}`.catch(() => {
      this.lastUsedWritten.delete(keyId)
    })
  }

  /**
   * The project named in a path (a numeric id or @current) if the principal's user may see it.
   * Everything else is 404, so a key never learns whether another organization's project exists.
   */
  async project(principal: Principal, projectIdParam: string): Promise<ProjectRow> {
    try {
      let id: number | null
      if (projectIdParam === '@current') id = await currentProjectId(this.sql, principal.userId)
      else id = /^\d{1,9}$/.test(projectIdParam) ? Number(projectIdParam) : null
      if (id === null) throw errors.notFound('Project not found.')
      const project = await projectOfUser(this.sql, principal.userId, id)
      if (!project) throw errors.notFound('Project not found.')
      return project
    } catch (error) {
      if (error instanceof ApiError) throw error
      if (isConnectionError(error)) throw errors.databaseUnavailable()
      throw error
    }
  }
}
