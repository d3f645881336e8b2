// What a personal key's scopes let it do, PostHog's model: a key holds `*` or `<object>:read|write` scopes; each
// private route needs one scope (`<object>:read` to read, `<object>:write` to change, and `write` satisfies `read`);
// a key without it gets 403 "API key missing required scope '<scope>'". Where PostHog has no scope (managing
// personal keys, which it does not allow with a key at all), only a `*` key may act. A route this table does not
// know needs `*`: a new route is closed to scoped keys until it is given its object here.
import { errors } from '../http/errors'

/** The path segment under /api/projects/:id/ → PostHog's scope object. */
const PROJECT_RESOURCES: Readonly<Record<string, string>> = {
  feature_flags: 'feature_flag',
  cohorts: 'cohort',
  event_definitions: 'event_definition',
  property_definitions: 'property_definition',
  persons: 'person',
  groups: 'group',
  groups_types: 'group',
  events: 'query',
  query: 'query',
  insights: 'insight',
  dashboards: 'dashboard',
  experiments: 'experiment',
  actions: 'action',
  session_recordings: 'session_recording',
  error_tracking: 'error_tracking',
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The scope a request needs: `<object>:<read|write>`, `*`, or null for none (the calling key's own record). */
export function requiredScope(method: string, pathname: string): string | null {
  const parts = pathname.split('/').filter((p) => p !== '')
  const action = READ_METHODS.has(method.toUpperCase()) ? 'read' : 'write'
  if (parts[0] === 'flags' && parts[1] === 'definitions') return 'feature_flag:read'
  if (parts[0] !== 'api') return '*'
  if (parts[1] === 'feature_flag' && parts[2] === 'local_evaluation') return 'feature_flag:read'
  if (parts[1] === 'personal_api_keys') {
    // reading the calling key itself needs nothing (PostHog's self access); anything else about keys needs `*`
    return action === 'read' && parts[2] === '@current' && parts.length === 3 ? null : '*'
  }
  // PostHog's organization_member scope: /api/organizations/:id/members/…
  if (parts[1] === 'organizations' && parts[3] === 'members') return `organization_member:${action}`
  if (parts[1] !== 'projects') return '*'
  if (parts.length <= 3) return `project:${action}`
  if (parts[3] === 'reset_token' && parts.length === 4) return 'project:write'
  const object = PROJECT_RESOURCES[parts[3]]
  if (!object) return '*'
  // local evaluation reads the flags whatever the method; a query is a read though it is POSTed (as in PostHog)
  if (object === 'feature_flag' && parts[4] === 'local_evaluation') return 'feature_flag:read'
  if (parts[3] === 'query' && parts.length === 4) return 'query:read'
  return `${object}:${action}`
}

/** A stored scope list: null or empty means `*` (keys made before scopes existed, and the bootstrap key). */
export function effectiveScopes(stored: readonly string[] | null | undefined): readonly string[] {
  return stored && stored.length > 0 ? stored : ['*']
}

export function hasScope(scopes: readonly string[], needed: string): boolean {
  if (scopes.includes('*')) return true
  if (needed === '*') return false
  if (scopes.includes(needed)) return true
  const [object, action] = needed.split(':')
  return action === 'read' && scopes.includes(`${object}:write`)
}

/** 403 unless the key's scopes allow this request. */
export function assertScope(scopes: readonly string[], method: string, pathname: string): void {
  const needed = requiredScope(method, pathname)
  if (needed === null || hasScope(scopes, needed)) return
  if (needed === '*') throw errors.permissionDenied('This action needs a personal API key with the scope "*" (all access).')
  throw errors.permissionDenied(`API key missing required scope '${needed}'`)
}
