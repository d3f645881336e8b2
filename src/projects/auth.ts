// Personal API keys (Authorization: Bearer phx_…) for the private API, and project access checks.
import type { Sql } from 'postgres'
import { NUMERIC_ID } from '../http/fields'
import { isConnectionError } from '../db/postgres'
import { hashKey, plausibleKey, sameHash } from './keys'
import { currentProjectId, projectOfUser, type ProjectRow } from './repository'
import { ApiError, errors } from '../http/errors'
import { RateLimiter } from '../http/rate-limit'
import { effectiveScopes } from './scopes'
import { addressGroup } from '../http/address'

export interface Principal {
  userId: number
  userUuid: string
  keyId: string
  /** what the key may do (scopes.ts); `*` for keys stored without scopes */
  scopes: readonly string[]
  /** the projects the key is limited to, or null for every project of its user */
  scopedTeams: readonly number[] | null
  /** the organizations the key is limited to, or null */
  scopedOrganizations: readonly string[] | null
}

/**
 * Personal keys are looked up in Postgres on every request, as PostHog does, so a revoked or rolled key is refused
 * from the next request on every process. What is remembered:
 * - the last principal of each key, used only while Postgres is unreachable (stale beats down), for STALE_MS;
 * - unknown keys, for NEGATIVE_TTL_MS, so a repeated bad key costs no query;
 * - per client address, how many unknown keys it presented: past the limit its lookups of keys not seen valid
 *   recently are refused with 429 before any query.
 * Every map is bounded in entries and, since a key longer than MAX_KEY_LENGTH is refused before it is hashed,
 * in bytes (an entry holds a 71-character hash or an address and a few numbers).
 */
interface Remembered {
  principal: Principal
  at: number
}

export interface PersonalKeyAuthOptions {
  /** unknown keys a client address may present per minute before its lookups are throttled; 0 = unlimited */
  unknownPerMinute?: number
  negativeTtlMs?: number
  maxEntries?: number
  /** behind a trusted proxy the client address is the first X-Forwarded-For entry */
  /** behind trusted proxies: how many append to X-Forwarded-For (true: one) */
  trustProxy?: boolean | number
}

const STALE_MS = 10_000
const RECENTLY_VALID_MS = 60 * 60 * 1000
const LAST_USED_EVERY_MS = 60 * 60 * 1000
const BEARER = /^Bearer\s+(\S.*)$/

/** Console sessions (users/): the principal behind a request's session cookie, or null when it has none. */
export interface SessionResolver {
  principalOf(request: Request): Promise<Principal | null>
}

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

function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key)
  if (map.size >= max) map.delete(map.keys().next().value!)
  map.set(key, value)
}

export class PersonalKeyAuth {
  private readonly lastKnown = new Map<string, Remembered>()
  private readonly unknown = new Map<string, number>()
  private readonly failures: RateLimiter
  private readonly blockedUntil = new Map<string, number>()
  private readonly lastUsedWritten = new Map<string, number>()
  private readonly negativeTtlMs: number
  private readonly maxEntries: number
  /** Postgres lookups of keys, for tests and metrics */
  lookups = 0
  readonly trustProxy: boolean | number
  /** set by services.ts: without a personal key, the private API accepts a console session cookie */
  sessions: SessionResolver | null = null

  constructor(
    private readonly sql: Sql,
    options: PersonalKeyAuthOptions = {},
  ) {
    this.negativeTtlMs = options.negativeTtlMs ?? 10_000
    this.maxEntries = options.maxEntries ?? 10_000
    this.trustProxy = options.trustProxy ?? false
    this.failures = new RateLimiter(options.unknownPerMinute ?? 60, 60_000, this.maxEntries)
  }

  /** A key was revoked or rolled somewhere: forget what could still let it in while Postgres is down. */
  forget(): void {
    this.lastKnown.clear()
    this.unknown.clear()
  }

  /**
   * Who calls the private API: the request's personal key (header or ?personal_api_key=), else its console session
   * (which enforces the CSRF rule on writes); 401 when it has neither.
   */
  authenticateRequest(request: Request, clientAddress: string | null): Promise<Principal> {
    // once a request: the early check of a request with a body (app.ts) and its route's guard share the answer
    let answer = this.byRequest.get(request)
    if (!answer) {
      answer = this.resolveRequest(request, clientAddress)
      this.byRequest.set(request, answer)
    }
    return answer
  }

  private readonly byRequest = new WeakMap<Request, Promise<Principal>>()

  private async resolveRequest(request: Request, clientAddress: string | null): Promise<Principal> {
    const query = request.url.includes('personal_api_key=') ? new URL(request.url).searchParams : null
    const candidate = findPersonalKey(request.headers.get('authorization'), query)
    if (!candidate && this.sessions) {
      const principal = await this.sessions.principalOf(request)
      if (principal) return principal
    }
    return this.authenticate(candidate, clientAddress)
  }

  /** The principal behind a request's personal key; 401 when absent or unknown, 503 when Postgres is down. */
  async authenticate(candidate: KeyCandidate | null, clientAddress: string | null = null): Promise<Principal> {
    if (!candidate || !candidate.key) throw errors.notAuthenticated()
    if (!plausibleKey(candidate.key)) throw errors.invalidPersonalKey(candidate.source)
    const secureValue = hashKey(candidate.key)
    const now = Date.now()
    const missedAt = this.unknown.get(secureValue)
    if (missedAt !== undefined && now - missedAt < this.negativeTtlMs) throw errors.invalidPersonalKey(candidate.source)
    const known = this.lastKnown.get(secureValue)
    // failed keys counted per address (an IPv6 one by its /64)
    const address = clientAddress ? addressGroup(clientAddress) : 'unknown address'
    const blocked = this.blockedUntil.get(address)
    if (blocked !== undefined && blocked > now && !(known && now - known.at < RECENTLY_VALID_MS)) {
      throw errors.throttled(Math.max(1, Math.ceil((blocked - now) / 1000)))
    }
    let row:
      | { id: string; user_id: number; uuid: string; secure_value: string; last_used_at: Date | null; scopes: string[] | null; scoped_teams: number[] | null; scoped_organizations: string[] | null }
      | undefined
    try {
      this.lookups++
      ;[row] = await this.sql<typeof row[]>`
        select k.id, k.user_id, u.uuid, k.secure_value, k.last_used_at, k.scopes, k.scoped_teams, k.scoped_organizations
        from personal_api_keys k join users u on u.id = k.user_id
        where k.secure_value = ${secureValue} and u.is_active`
    } catch (error) {
      if (isConnectionError(error)) {
        if (known && now - known.at < STALE_MS) return known.principal
        throw errors.databaseUnavailable()
      }
      throw error
    }
    if (!row || !sameHash(row.secure_value, secureValue)) {
      this.lastKnown.delete(secureValue)
      remember(this.unknown, secureValue, now, this.maxEntries)
      const wait = this.failures.take(address, now)
      if (wait > 0) remember(this.blockedUntil, address, now + wait * 1000, this.maxEntries)
      throw errors.invalidPersonalKey(candidate.source)
    }
    const principal: Principal = {
      userId: row.user_id,
      userUuid: row.uuid,
      keyId: row.id,
      scopes: effectiveScopes(row.scopes),
      scopedTeams: row.scoped_teams?.length ? row.scoped_teams : null,
      scopedOrganizations: row.scoped_organizations?.length ? row.scoped_organizations : null,
    }
    remember(this.lastKnown, secureValue, { principal, at: now }, this.maxEntries)
    this.touch(row.id, row.last_used_at, now)
    return principal
  }

  /** Record last use at most once an hour per key, off the request path. */
  private touch(keyId: string, lastUsedAt: Date | null, now: number): void {
    const written = this.lastUsedWritten.get(keyId) ?? lastUsedAt?.getTime() ?? 0
    if (now - written < LAST_USED_EVERY_MS) return
    remember(this.lastUsedWritten, keyId, now, this.maxEntries)
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
      else id = NUMERIC_ID.test(projectIdParam) ? Number(projectIdParam) : null
      if (id === null) throw errors.notFound('Project not found.')
      const project = await projectOfUser(this.sql, principal.userId, id)
      if (!project) throw errors.notFound('Project not found.')
      assertKeyReaches(principal, project)
      return project
    } catch (error) {
      if (error instanceof ApiError) throw error
      if (isConnectionError(error)) throw errors.databaseUnavailable()
      throw error
    }
  }
}

/** A key limited to some projects or organizations (scoped_teams, scoped_organizations) reaches no other. */
export function assertKeyReaches(principal: Principal, project: { id: number; organizationId: string }): void {
  if (principal.scopedTeams && !principal.scopedTeams.includes(project.id)) {
    throw errors.permissionDenied(`API key does not have access to the requested project: ID ${project.id}.`)
  }
  if (principal.scopedOrganizations && !principal.scopedOrganizations.includes(project.organizationId)) {
    throw errors.permissionDenied(`API key does not have access to the requested organization: ID ${project.organizationId}.`)
  }
}
