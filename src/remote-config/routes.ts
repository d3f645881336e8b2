// GET /array/:token/config.js and /array/:token/config: the remote configuration current posthog-js loads
// on every page before it asks for flags (1.201.1 and later). It tells the library where to send events,
// that it may gzip them, that flags exist, and whether and how to record sessions (the project's settings);
// everything this service does not offer is switched off.
import { Elysia, t } from 'elysia'
import { corsHeaders } from '../http/cors'
import { errors } from '../http/errors'
import type { ProjectTokenCache } from '../projects/token-cache'
import { documentedAnswer, model } from '../http/openapi'
import { DEFAULT_CAPABILITIES, type ClientCapabilities } from './capabilities'

/** Where the project's capabilities come from: the flag cache's entry, loaded with the project's flags and settings. */
export interface CapabilitiesSource {
  peek(teamId: number): { capabilities: ClientCapabilities } | undefined
  get(teamId: number): Promise<{ capabilities: ClientCapabilities }>
}

export function remoteConfig(token: string, capabilities: ClientCapabilities = DEFAULT_CAPABILITIES) {
  return { token, hasFeatureFlags: true, ...capabilities }
}

/** The script form: it registers the config where posthog-js looks for it. */
export function remoteConfigScript(token: string, capabilities: ClientCapabilities = DEFAULT_CAPABILITIES): string {
  const config = JSON.stringify(remoteConfig(token, capabilities))
  return `(function(){window._POSTHOG_REMOTE_CONFIG=window._POSTHOG_REMOTE_CONFIG||{};window._POSTHOG_REMOTE_CONFIG[${JSON.stringify(token)}]={config:${config},siteApps:[]}})();`
}

/** Both texts of a project, written once per capabilities object (the project's settings) and token. */
const written = new WeakMap<ClientCapabilities, { token: string; json: string; script: string }>()

function textsOf(token: string, capabilities: ClientCapabilities) {
  let texts = written.get(capabilities)
  if (texts === undefined || texts.token !== token) {
    texts = { token, json: JSON.stringify(remoteConfig(token, capabilities)), script: remoteConfigScript(token, capabilities) }
    written.set(capabilities, texts)
  }
  return texts
}

const RemoteConfig = model(
  'RemoteConfig',
  t.Object({ token: t.String() }, { additionalProperties: true, description: 'what the service offers posthog-js (see the README)' }),
)

export function remoteConfigRoutes(deps: { tokens: ProjectTokenCache; projects: CapabilitiesSource }) {
  const texts = async (token: string) => {
    const found = await deps.tokens.lookup(token)
    if (found === 'unknown') throw errors.notFound('No project has this token.')
    if (found === 'unavailable') throw errors.fetchTeamFail()
    let entry = deps.projects.peek(found)
    if (entry === undefined) {
      // never loaded and Postgres unreachable: recording stays off rather than the page getting no config
      entry = await deps.projects.get(found).catch(() => ({ capabilities: DEFAULT_CAPABILITIES }))
    }
    return textsOf(token, entry.capabilities)
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
        const { script } = await texts(params.token)
        return new Response(script, { headers: headers(request, 'application/javascript; charset=utf-8') })
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
        const { json } = await texts(params.token)
        return new Response(json, { headers: headers(request, 'application/json') })
      },
      { params: t.Object({ token: t.String() }), detail: { tags: ['remote config'], summary: 'posthog-js remote config (JSON)', responses: documentedAnswer(RemoteConfig) } },
    )
}
