// What the console's Chromium tests share: a signed-in page, the query API's answer to compare the page with, and
// waiting for a value the service computes a moment later.
import { expect } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
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
  page.setDefaultTimeout(15_000)
  await page.setViewportSize({ width: 1200, height: 900 })
  await page.goto(`${service.url}/console/`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('navigation').waitFor()
  return page
}
