// GET /swagger/json (the OpenAPI document) and /swagger, /swagger/ (Swagger UI). The UI's files come from the
// swagger-ui-dist package and are served by this service: the page makes no request to any other host.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Elysia, t } from 'elysia'
import { buildOpenApi } from './openapi'

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
}

function page(title: string): string {
  const escaped = title.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>${escaped}</title>
  <link rel="icon" type="image/png" href="/swagger/assets/favicon-32x32.png" />
  <link rel="stylesheet" href="/swagger/assets/swagger-ui.css" />
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/swagger/assets/swagger-ui-bundle.js"></script>
  <script src="/swagger/assets/swagger-ui-standalone-preset.js"></script>
  <script>
    // validatorUrl: null keeps the UI from asking an outside validator about the document
    window.ui = SwaggerUIBundle({
      url: '/swagger/json',
      dom_id: '#swagger-ui',
      validatorUrl: null,
      deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      layout: 'StandaloneLayout',
    })
  </script>
</body>
</html>
`
}

export function apiDocsRoutes(deps: { routes: () => Parameters<typeof buildOpenApi>[0]; info: Record<string, unknown> }) {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
  const files = new Map<string, Uint8Array>()
  const html = page(String(deps.info.title ?? 'API'))
  let document: string | null = null
  const tags = ['docs']
  const htmlAnswer = () => new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } })
  const htmlDetail = {
    summary: 'Swagger UI (served locally)',
    tags,
    responses: { 200: { description: 'the UI page', content: { 'text/html': { schema: { type: 'string' } } } } },
  } as never
  return new Elysia({ name: 'api-docs' })
    .get('/swagger', htmlAnswer, { detail: htmlDetail })
    .get('/swagger/', htmlAnswer, { detail: htmlDetail })
    .get(
      '/swagger/json',
      () => {
        // built once, on first use, when every plugin has registered its routes
        document ??= JSON.stringify(buildOpenApi(deps.routes(), deps.info))
        return new Response(document, { headers: { 'content-type': 'application/json' } })
      },
      {
        detail: {
          summary: 'This OpenAPI 3.1 document',
          tags,
          responses: { 200: { description: 'OpenAPI document', content: { 'application/json': { schema: { type: 'object' } } } } },
        } as never,
      },
    )
    .get(
      '/swagger/assets/:file',
      ({ params }) => {
        const type = ASSETS[params.file]
        if (!type) return new Response(JSON.stringify({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null }), { status: 404, headers: { 'content-type': 'application/json' } })
        let body = files.get(params.file)
        if (!body) {
          body = readFileSync(join(dir, params.file))
          files.set(params.file, body)
        }
        return new Response(body, { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } })
      },
      {
        params: t.Object({ file: t.String({ maxLength: 64 }) }),
        detail: {
          summary: 'Swagger UI’s files (from the swagger-ui-dist package)',
          tags,
          responses: { 200: { description: 'a CSS, JavaScript or PNG file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } } },
        } as never,
      },
    )
}
