// /api/personal_api_keys/: a personal key (or a console session) manages its own user's keys, within its limits
// (key-limits.ts: a limited key makes no wider key and rolls or revokes only itself).
import { Elysia, t } from 'elysia'
import type { Sql } from 'postgres'
import type { PersonalKeyAuth } from './auth'
import { personalKeyGuard } from './guards'
import type { RateLimiter } from '../http/rate-limit'
import { PersonalApiKey, PersonalApiKeyCreate, PersonalApiKeyList } from './model'
import { PersonalKeyService } from './personal-keys'

const KeyParams = t.Object({ id: t.String({ maxLength: 64, description: 'key id, or @current for the calling key' }) })

export function personalKeyRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter }) {
  const keys = new PersonalKeyService(deps.sql)
  const tags = ['personal_api_keys']
  return new Elysia({ name: 'personal-api-keys' })
    .use(personalKeyGuard(deps.auth, deps.limiter))
    .get('/api/personal_api_keys/', ({ principal }) => keys.list(principal.userId), {
      response: { 200: PersonalApiKeyList },
      detail: { summary: 'The calling user’s personal API keys, newest first (values masked)', tags },
    })
    .post(
      '/api/personal_api_keys/',
      async ({ principal, body, set }) => {
        const created = await keys.create(principal.userId, body, principal)
        set.status = 201
        return created
      },
      {
        body: PersonalApiKeyCreate,
        response: { 201: PersonalApiKey },
        detail: { summary: 'Create a personal API key; the answer is the only one carrying its value', tags },
      },
    )
    .get('/api/personal_api_keys/:id/', ({ principal, params }) => keys.get(principal.userId, params.id, principal.keyId), {
      params: KeyParams,
      response: { 200: PersonalApiKey },
      detail: { summary: 'One of the calling user’s keys (@current: the calling key)', tags },
    })
    .delete(
      '/api/personal_api_keys/:id/',
      async ({ principal, params }) => {
        const id = params.id === '@current' ? principal.keyId : params.id
        await keys.revoke(principal.userId, id, principal)
        return new Response(null, { status: 204 })
      },
      {
        params: KeyParams,
        detail: { summary: 'Revoke a key: refused from the next request on every process', tags, responses: { 204: { description: 'revoked' } } },
      },
    )
    .post(
      '/api/personal_api_keys/:id/roll/',
      ({ principal, params }) => keys.roll(principal.userId, params.id === '@current' ? principal.keyId : params.id, principal),
      {
        params: KeyParams,
        response: { 200: PersonalApiKey },
        detail: { summary: 'A new value for the same key; the old value is refused at once', tags },
      },
    )
}
