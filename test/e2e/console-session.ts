// What the console's Chromium tests share: a signed-in page, the query API's answer to compare the page with, and
// waiting for a value the service computes a moment later.
import { expect } from 'bun:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { newPage } from './browser'
import type { E2EService } from './service'

/** Reads until `check` holds (or `ms` pass), answering the last value read. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  let value = await read()
  while (!check(value) && Date.now() < deadline) {
    await Bun.sleep(200)
    value = await read()
  }
  return value
}

/** The query API's answer to a node, computed anew. */
export async function queryAnswer(service: E2EService, node: Record<string, unknown>): Promise<any> {
  const r = await service.api('/api/projects/1/query/', { method: 'POST', json: { query: node, refresh: 'force_blocking' } })
  expect(r.status).toBe(200)
  return r.body
}

/** A page of the console, 1200 × 900, signed in as a person would: the sign-in form, then the navigation. */
export async function signedInPage(browser: Browser, service: E2EService, email: string, password: string): Promise<Page> {
  const page = await newPage(browser)
  page.setDefaultTimeout(30_000) // Chromium under the whole suite's load on 2 cores
  await page.setViewportSize({ width: 1200, height: 900 })
  await page.goto(`${service.url}/console/`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('navigation').waitFor()
  return page
}

/** A table's body rows, each cell's text. */
export async function tableRows(table: Locator): Promise<string[][]> {
  return table.locator('tbody tr').evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => (cell.textContent ?? '').trim())))
}

/** The chart named `name` and its table view, opened (a chart drawn anew starts with it folded). */
export async function chartTable(page: Page, name: string): Promise<Locator> {
  await page.getByRole('img', { name, exact: true }).waitFor()
  const table = page.getByRole('table', { name: `${name} as a table` })
  if (!(await table.isVisible())) await page.locator('summary', { hasText: 'Table view' }).first().click()
  await table.waitFor()
  return table
}
