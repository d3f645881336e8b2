// Swagger UI renders from files the service serves itself: Chromium with every non-loopback request blocked (and
// recorded) lists the document's operations at /swagger and /swagger/, and no request tried to leave the host.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { freshEnv } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { launchBrowser, newPage } from './browser'

describe('Swagger UI offline', () => {
  let service: ServiceProcess
  let browser: Browser
  beforeAll(async () => {
    ;[service, browser] = await Promise.all([
      freshEnv({ postgres: 'embedded', clickhouse: 'embedded' }).then((env) => spawnService(env)),
      launchBrowser(),
    ])
  })
  afterAll(async () => {
    await browser?.close()
    await service?.stop()
  })

  for (const path of ['/swagger', '/swagger/']) {
    test(`${path} lists the operations with no request leaving the host`, async () => {
      const doc = (await (await fetch(`${service.url}/swagger/json`)).json()) as { paths: Record<string, Record<string, unknown>> }
      const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0)
      const page = await newPage(browser)
      const blocked: string[] = []
      const served: string[] = []
      await page.context().route('**/*', (route) => {
        const url = new URL(route.request().url())
        if (url.protocol === 'data:' || url.protocol === 'blob:' || ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
          served.push(url.pathname)
          return route.continue()
        }
        blocked.push(url.href)
        return route.abort()
      })
      await page.goto(`${service.url}${path}`)
      await page.waitForSelector('.opblock', { timeout: 30_000 })
      // every tag section is expanded by default: one .opblock per operation
      await page.waitForFunction((n) => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll(".opblock").length >= n, operations, { timeout: 30_000 })
      const listed = await page.$$eval('.opblock-summary-path', (els) => els.map((e) => e.getAttribute('data-path')))
      expect(listed).toContain('/api/personal_api_keys/')
      expect(listed).toContain('/capture')
      expect(await page.locator('.opblock').count()).toBe(operations)
      // let late requests (fonts, validators, telemetry) show themselves
      await page.waitForTimeout(500)
      expect(blocked).toEqual([])
      expect(served).toContain('/swagger/assets/swagger-ui-bundle.js')
      expect(served).toContain('/swagger/json')
      await page.context().close()
    })
  }
})
