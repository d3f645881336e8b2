// Headless Chromium (Debian's package) driven by playwright-core (which gives each launch a fresh profile),
// looking like an ordinary browser: posthog-js silently drops events from browsers that look automated.
import { chromium, type Browser, type Page } from 'playwright-core'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { freePort } from '../helpers/spawn-service'

const CHROMIUM = '/usr/bin/chromium'
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium)`)
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-blink-features=AutomationControlled',
    ],
  })
}

export async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ userAgent: USER_AGENT })
  const page = await context.newPage()
  await page.addInitScript(() => Object.defineProperty(navigator, 'webdriver', { get: () => false }))
  return page
}

const POSTHOG_JS: Record<string, string> = {
  newest: fileURLToPath(new URL('../../node_modules/posthog-js/dist/array.full.js', import.meta.url)),
  '1.201.0': fileURLToPath(new URL('../../node_modules/posthog-js-1201/dist/array.full.js', import.meta.url)),
  // without rrweb inside, as the snippet loads it: posthog-js then fetches its recorder from the api host's /static/
  '1.449-lazy': fileURLToPath(new URL('../../node_modules/posthog-js/dist/array.js', import.meta.url)),
  '1.201-lazy': fileURLToPath(new URL('../../node_modules/posthog-js-1201/dist/array.js', import.meta.url)),
}

export interface PageServer {
  url: string
  port: number
  stop(): void
}

/** A site on its own origin (so every call to the service is cross-origin, as in production). */
export async function servePage(html: string, posthogVersion: keyof typeof POSTHOG_JS | string): Promise<PageServer> {
  const script = POSTHOG_JS[posthogVersion]
  if (!script) throw new Error(`no posthog-js ${posthogVersion}`)
  const server = Bun.serve({
    port: await freePort(),
    hostname: '127.0.0.1',
    fetch(request) {
      const path = new URL(request.url).pathname
      if (path === '/posthog.js') return new Response(Bun.file(script), { headers: { 'content-type': 'application/javascript' } })
      if (path === '/') return new Response(html, { headers: { 'content-type': 'text/html' } })
      return new Response('not found', { status: 404 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, port: server.port!, stop: () => server.stop(true) }
}
