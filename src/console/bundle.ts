// The console (console/ at the repository root) bundled by Bun once, at the first request, and kept in memory:
// minified, with content-hashed asset names so that browsers may keep them for a year.
import { fileURLToPath } from 'node:url'

export const CONSOLE_ENTRY = fileURLToPath(new URL('../../console/main.tsx', import.meta.url))

export interface Asset {
  body: Uint8Array
  type: string
}

export interface ConsoleBundle {
  /** the page every /console/ path answers with */
  html: string
  /** by file name, e.g. "main-1a2b3c4d.js" */
  assets: Map<string, Asset>
  /** JavaScript bytes before compression, the whole app */
  scriptBytes: number
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
  for (const output of result.outputs) {
    const name = output.path.split('/').pop()!
    const ext = name.split('.').pop() ?? ''
    const body = new Uint8Array(await output.arrayBuffer())
    assets.set(name, { body, type: TYPES[ext] ?? 'application/octet-stream' })
    if (ext === 'js') scriptBytes += body.byteLength
    if (output.kind === 'entry-point' && ext === 'js') script = name
    if (ext === 'css') style = name
  }
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>phog console</title>
${style ? `<link rel="stylesheet" href="/console/assets/${style}">` : ''}
<script type="module" src="/console/assets/${script}"></script>
</head>
<body>
<div id="app"><p>Loading…</p></div>
<noscript>The phog console needs JavaScript.</noscript>
</body>
</html>
`
  return { html, assets, scriptBytes }
}
