// The console (console/ at the repository root) bundled by Bun once, at the first request, and kept in memory:
// minified, with content-hashed asset names so that browsers may keep them for a year.
import { fileURLToPath } from 'node:url'

export const CONSOLE_ENTRY = fileURLToPath(new URL('../../console/main.tsx', import.meta.url))

export interface Asset {
  body: Uint8Array
  /** the same bytes gzipped once, at build (null when gzip would not make it smaller) */
  gzip: Uint8Array | null
  type: string
}

/** Gzipped once when the bundle is built, never per request; kept only when it saves bytes. */
export function precompressed(body: Uint8Array): Uint8Array | null {
  const gzip = Bun.gzipSync(body as Uint8Array<ArrayBuffer>, { level: 9 })
  return gzip.byteLength < body.byteLength ? gzip : null
}

/** The console's icon (also answered at /favicon.ico, so that a browser's default request finds it). */
export const FAVICON: Asset = (() => {
  const body = new TextEncoder().encode(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d4aff"/><path d="M4 12V4h4.5a2.5 2.5 0 0 1 0 5H4" fill="none" stroke="#fff" stroke-width="2"/></svg>',
  )
  return { body, gzip: precompressed(body), type: 'image/svg+xml' }
})()

export interface ConsoleBundle {
  /** the page every /console/ path answers with */
  html: string
  /** the page gzipped once */
  htmlGzip: Uint8Array
  /** by file name, e.g. "main-1a2b3c4d.js" */
  assets: Map<string, Asset>
  /** JavaScript bytes before compression, the whole app */
  scriptBytes: number
  /** JavaScript bytes gzipped, as browsers receive them */
  scriptGzipBytes: number
}

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
}

export async function buildConsole(entry = CONSOLE_ENTRY): Promise<ConsoleBundle> {
  const result = await Bun.build({
    entrypoints: [entry],
    target: 'browser',
    minify: true,
    splitting: true, // the replay player (rrweb) is its own chunk, loaded by its page only
    naming: { entry: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]' },
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  if (!result.success) {
    throw new Error(`the console did not build: ${result.logs.map((l) => l.message).join('; ')}`)
  }
  const assets = new Map<string, Asset>()
  let script = ''
  let style = ''
  let scriptBytes = 0
  let scriptGzipBytes = 0
  for (const output of result.outputs) {
    const name = output.path.split('/').pop()!
    const ext = name.split('.').pop() ?? ''
    const body = new Uint8Array(await output.arrayBuffer())
    const gzip = precompressed(body)
    assets.set(name, { body, gzip, type: TYPES[ext] ?? 'application/octet-stream' })
    if (ext === 'js') {
      scriptBytes += body.byteLength
      scriptGzipBytes += (gzip ?? body).byteLength
    }
    if (output.kind === 'entry-point' && ext === 'js') script = name
    if (ext === 'css') style = name
  }
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>phog console</title>
<link rel="icon" type="image/svg+xml" href="/console/favicon.svg">
${style ? `<link rel="stylesheet" href="/console/assets/${style}">` : ''}
<script type="module" src="/console/assets/${script}"></script>
</head>
<body>
<div id="app"><p>Loading…</p></div>
<noscript>The phog console needs JavaScript.</noscript>
</body>
</html>
`
  return { html, htmlGzip: Bun.gzipSync(html, { level: 9 }), assets, scriptBytes, scriptGzipBytes }
}
