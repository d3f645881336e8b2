// GET /array/:token/config.js and /array/:token/config: the remote configuration current posthog-js loads
// on every page before it asks for flags (1.201.1 and later). It tells the library where to send events,
// that it may gzip them, and that flags exist; everything this service does not offer is switched off.
import { Elysia, t } from 'elysia'
import { corsHeaders } from '../http/cors'
import { errors } from '../http/errors'
import type { ProjectTokenCache } from '../projects/token-cache'
import { documentedAnswer, model } from '../http/openapi'
import { clientCapabilities } from './capabilities'

export function remoteConfig(token: string) {
  return { token, hasFeatureFlags: true, ...clientCapabilities() }
}

/** The script form: it registers the config where posthog-js looks for it. */
export function remoteConfigScript(token: string): string {
  const config = JSON.stringify(remoteConfig(token))
  return `(function(){window._POSTHOG_REMOTE_CONFIG=window._POSTHOG_REMOTE_CONFIG||{};window._POSTHOG_REMOTE_CONFIG[${JSON.stringify(token)}]={config:${config},siteApps:[]}})();`
}

const RemoteConfig = model(
  'RemoteConfig',
  t.Object({ token: t.String() }, { additionalProperties: true, description: 'what the service offers posthog-js (see the README)' }),
)

export function remoteConfigRoutes(deps: { tokens: ProjectTokenCache }) {
  const known = async (token: string) => {
    const found = await deps.tokens.lookup(token)
    if (found === 'unknown') throw errors.notFound('No project has this token.')
    if (found === 'unavailable') throw errors.fetchTeamFail()
  }
  const headers = (request: Request, type: string) => ({
    ...corsHeaders(request),
    'content-type': type,
    'cache-control': 'public, max-age=300',
  })
  return new Elysia({ name: 'remote-config' })
    .get(
      '/array/:token/config.js',
      async ({ params, request }) => {
        await known(params.token)
        return new Response(remoteConfigScript(params.token), { headers: headers(request, 'application/javascript; charset=utf-8') })
      },
      { params: t.Object({ token: t.String() }), detail: {
          tags: ['remote config'],
          summary: 'posthog-js remote config (script)',
          responses: { 200: { description: 'a script setting window._POSTHOG_REMOTE_CONFIG[token]', content: { 'application/javascript': { schema: { type: 'string' } } } } } as never,
        },
      },
    )
    .get(
      '/array/:token/config',
      async ({ params, request }) => {
        await known(params.token)
        return new Response(JSON.stringify(remoteConfig(params.token)), { headers: headers(request, 'application/json') })
      },
      { params: t.Object({ token: t.String() }), detail: { tags: ['remote config'], summary: 'posthog-js remote config (JSON)', responses: documentedAnswer(RemoteConfig) } },
    )
}
