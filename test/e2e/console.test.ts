// The console in Debian's Chromium, driven as a person would, by roles and accessible names: sign in, flags (and
// /decide following them), live events, a definition's description, a CSV cohort, keys, the token reset, sign out.
// No page error and no request to any other host is allowed; an event named like HTML shows as text.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { fileURLToPath } from 'node:url'
import { launchBrowser, newPage } from './browser'
import { PROJECT_KEY, startService, type E2EService } from './service'
import { freshDataDir } from '../helpers/stack'
import { runCli } from '../helpers/spawn-service'

const EMAIL = 'admin@example.com'
const PASSWORD = 'console e2e password'
const SCREENSHOT = fileURLToPath(new URL('../../docs/console.png', import.meta.url))
const XSS = '<img src=x onerror="window.__xss=1">'

let service: E2EService
let browser: Browser
let page: Page
let dataDir: string
const pageErrors: string[] = []
const foreignRequests: string[] = []

async function capture(event: string, distinctId: string, properties: Record<string, unknown> = {}, token = PROJECT_KEY): Promise<number> {
  const r = await fetch(`${service.url}/capture/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: token, event, distinct_id: distinctId, properties }),
  })
  return r.status
}

async function decide(distinctId: string, token = PROJECT_KEY): Promise<{ status: number; flags: Record<string, unknown> }> {
  const r = await fetch(`${service.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ token, distinct_id: distinctId }) })
  const body = (await r.json()) as { featureFlags?: Record<string, unknown> }
  return { status: r.status, flags: body.featureFlags ?? {} }
}

/** Polls until `check` holds (bounded). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  let value = await read()
  while (!check(value) && Date.now() < deadline) {
    await Bun.sleep(150)
    value = await read()
  }
  return value
}

const go = (label: string) => page.getByRole('navigation').getByRole('link', { name: label, exact: true }).click()

beforeAll(async () => {
  dataDir = await freshDataDir('embedded')
  ;[service, browser] = await Promise.all([startService('embedded', { INIT_ADMIN_EMAIL: EMAIL, INIT_ADMIN_PASSWORD: PASSWORD, DATA_DIR: dataDir }), launchBrowser()])
  page = await newPage(browser)
  const host = new URL(service.url).host
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of (400|401|404|429)/.test(message.text())) pageErrors.push(`console: ${message.text()}`)
  })
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.protocol !== 'data:' && url.host !== host) foreignRequests.push(request.url())
  })
  page.setDefaultTimeout(30_000) // Chromium under the whole suite's load on 2 cores
})

afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

describe('console', () => {
  test('/ leads to the sign-in page; a wrong password says so in an alert; the right one signs in', async () => {
    await page.goto(`${service.url}/`)
    await page.getByLabel('Email').waitFor()
    expect(new URL(page.url()).pathname).toStartWith('/console/')
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill('not the password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expectText(page.getByRole('alert'), 'Invalid email or password')
    // by keyboard: Enter in the password field submits
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByLabel('Password').press('Enter')
    const nav = page.getByRole('navigation')
    await nav.waitFor()
    const links = await nav.getByRole('link').allTextContents()
    expect(links).toEqual(['Live events', 'Insights', 'Dashboards', 'Web analytics', 'Session replay', 'Experiments', 'Surveys', 'Error tracking', 'Feature flags', 'Cohorts', 'Event definitions', 'Property definitions', 'Persons', 'Health', 'Settings'])
    // the session cookie is not readable by the page; the CSRF cookie is
    expect(await page.evaluate(() => (globalThis as any).document.cookie as string)).toContain('phog_csrftoken=')
    expect(await page.evaluate(() => (globalThis as any).document.cookie as string)).not.toContain('phog_session')
  })

  test('a deep link loads the app on its page', async () => {
    await page.goto(`${service.url}/console/settings`)
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor()
  })

  test('a deep link opened signed out comes back after sign-in', async () => {
    const other = await newPage(browser)
    try {
      await other.goto(`${service.url}/console/health`)
      await other.getByLabel('Email').fill(EMAIL)
      await other.getByLabel('Password').fill(PASSWORD)
      await other.getByRole('button', { name: 'Sign in' }).click()
      await other.getByRole('heading', { name: 'Health', level: 1 }).waitFor()
    } finally {
      await other.context().close()
    }
  })

  test('create a flag, toggle it, and /decide follows; the test box says what /decide answers and why', async () => {
    await go('Feature flags')
    await page.getByRole('link', { name: 'New feature flag' }).click()
    await page.getByLabel('Key', { exact: true }).fill('console-flag')
    await page.getByLabel('Name', { exact: true }).fill('Made in the console')
    await page.getByLabel('Rollout percentage').fill('100')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('heading', { name: 'Feature flag console-flag' }).waitFor()
    expect((await eventually(() => decide('user-1'), (d) => d.flags['console-flag'] === true)).flags['console-flag']).toBe(true)

    await page.getByLabel('Distinct ID').fill('user-1')
    await page.getByRole('button', { name: 'Test', exact: true }).click()
    const result = page.getByRole('status', { name: 'Test result' })
    await expectText(result, '/decide answers true')
    await expectText(result, 'condition_match')

    await go('Feature flags')
    const toggle = page.getByRole('switch', { name: 'Enabled console-flag' })
    expect(await toggle.isChecked()).toBe(true)
    await toggle.click()
    expect((await eventually(() => decide('user-1'), (d) => d.flags['console-flag'] !== true)).flags['console-flag']).not.toBe(true)
    await page.reload()
    expect(await page.getByRole('switch', { name: 'Enabled console-flag' }).isChecked()).toBe(false)
    // by keyboard: Space on the focused switch
    await page.getByRole('switch', { name: 'Enabled console-flag' }).focus()
    await page.keyboard.press('Space')
    expect((await eventually(() => decide('user-1'), (d) => d.flags['console-flag'] === true)).flags['console-flag']).toBe(true)

    // the flag's page lists both toggles and the creation, by whom
    await page.getByRole('link', { name: 'console-flag', exact: true }).click()
    const history = page.getByRole('region', { name: 'Change history' })
    await expectText(history, 'Enabled: false → true')
    await expectText(history, 'Enabled: true → false')
    await expectText(history, `Created`)
    await expectText(history, EMAIL)
  })

  test('a bad flag is refused with the API’s reason', async () => {
    await go('Feature flags')
    await page.getByRole('link', { name: 'New feature flag' }).click()
    await page.getByLabel('Key', { exact: true }).fill('console-flag')
    await page.getByRole('button', { name: 'Save' }).click()
    await expectText(page.getByRole('alert'), 'already')
  })

  test('a captured event appears in Live events by itself; a row opens its properties; an HTML-like name is text', async () => {
    await go('Live events')
    await page.getByRole('heading', { name: 'Live events', level: 1 }).waitFor()
    expect(await capture('console_seen', 'live-user', { plan: 'pro <b>bold</b>' })).toBe(200)
    expect(await capture(XSS, 'live-user')).toBe(200)
    const row = page.getByRole('button', { name: 'console_seen', exact: true })
    await row.waitFor()
    await row.click()
    await page.getByRole('cell', { name: 'pro <b>bold</b>', exact: true }).waitFor()
    const xssButton = page.getByRole('button', { name: XSS, exact: true })
    await xssButton.waitFor()
    expect(await xssButton.textContent()).toBe(XSS)
    expect(await page.locator('main img').count()).toBe(0)
    expect(await page.locator('main b').count()).toBe(0)
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined()
    // the chart is there, or says why it is not (the query API may be absent)
    await page.getByRole('heading', { name: 'Events per hour' }).waitFor()
  })

  test('the Event name filter narrows the list', async () => {
    await page.getByLabel('Event name').fill('console_seen')
    await eventually(() => page.getByRole('button', { name: XSS, exact: true }).count(), (n) => n === 0)
    expect(await page.getByRole('button', { name: XSS, exact: true }).count()).toBe(0)
    await page.getByLabel('Event name').fill('')
  })

  test('save a definition’s description', async () => {
    await go('Event definitions')
    await page.getByLabel('Search').fill('console_seen')
    await page.getByRole('link', { name: 'console_seen', exact: true }).click()
    await page.getByLabel('Description').fill('Seen from the console test')
    await page.getByRole('button', { name: 'Save' }).click()
    await expectText(page.getByRole('status'), 'Saved.')
    const stored = await service.api('/api/projects/1/event_definitions/?search=console_seen')
    expect(stored.body.results[0].description).toBe('Seen from the console test')
  })

  test('upload a CSV for a static cohort and see its members', async () => {
    for (const id of ['csv-a', 'csv-b']) expect(await capture('$pageview', id)).toBe(200)
    await eventually(() => service.api('/api/projects/1/persons/?distinct_id=csv-b'), (r) => r.body.results.length === 1)
    await go('Cohorts')
    await page.getByRole('link', { name: 'New cohort' }).click()
    await page.getByLabel('Name').fill('From CSV')
    await page.getByRole('radio', { name: /Static/ }).check()
    await page.getByLabel('Upload CSV').setInputFiles({ name: 'ids.csv', mimeType: 'text/csv', buffer: Buffer.from('distinct_id\ncsv-a\ncsv-b\n') })
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('heading', { name: 'Cohort From CSV' }).waitFor()
    const members = page.getByRole('region', { name: /Members/ })
    await members.getByRole('link', { name: 'csv-a' }).waitFor()
    await members.getByRole('link', { name: 'csv-b' }).waitFor()
  })

  test('a flag with property, dependency and cohort conditions, variants and a payload: the test box follows it', async () => {
    await go('Feature flags')
    await page.getByRole('link', { name: 'New feature flag' }).click()
    await page.getByLabel('Key', { exact: true }).fill('targeted')
    await page.getByRole('button', { name: 'Add person property filter' }).click()
    await page.getByLabel('Person property', { exact: true }).fill('plan')
    await page.getByLabel('Value', { exact: true }).fill('pro')
    await page.getByRole('button', { name: 'Add flag dependency' }).click()
    await page.getByLabel('Depends on flag').selectOption({ label: 'console-flag' })
    await page.getByRole('button', { name: 'Add condition set' }).click()
    const second = page.getByRole('group', { name: 'Condition set 2' })
    await second.getByRole('button', { name: 'Add cohort filter' }).click()
    await second.getByLabel('Cohort').selectOption({ label: 'From CSV' })
    await page.getByRole('button', { name: 'Add variant' }).click()
    await page.getByRole('button', { name: 'Add variant' }).click()
    await page.getByLabel('Variant percentage').nth(0).fill('50')
    await page.getByLabel('Variant percentage').nth(1).fill('50')
    await page.getByLabel('Payload for variant-1').fill('{"color": "red"}')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('heading', { name: 'Feature flag targeted' }).waitFor()

    const result = page.getByRole('status', { name: 'Test result' })
    const test = async (distinctId: string, properties = '') => {
      await page.getByLabel('Distinct ID').fill(distinctId)
      await page.getByLabel('Person properties').fill(properties)
      await page.getByRole('button', { name: 'Test', exact: true }).click()
      await result.waitFor()
      return eventually(async () => (await result.textContent()) ?? '', (t) => t.includes('Why'))
    }
    // in the static cohort: condition set 2
    expect(await test('csv-a')).toMatch(/answers variant-[12].*condition_match/)
    // on plan pro (and console-flag on): condition set 1
    expect(await test('someone', '{"plan": "pro"}')).toMatch(/answers variant-[12].*condition_match/)
    // neither
    expect(await test('someone')).toContain('answers false')
    const decided = await decide('csv-a')
    expect(['variant-1', 'variant-2']).toContain(decided.flags.targeted as string)
  })

  test('a property definition: type and description saved', async () => {
    await go('Property definitions')
    await page.getByLabel('Search').fill('plan')
    await page.getByRole('link', { name: 'plan', exact: true }).click()
    await page.getByLabel('Property type').selectOption('String')
    await page.getByLabel('Description').fill('The customer’s plan')
    await page.getByRole('button', { name: 'Save' }).click()
    await expectText(page.getByRole('status'), 'Saved.')
    const stored = await service.api('/api/projects/1/property_definitions/?search=plan')
    const plan = stored.body.results.find((d: { name: string }) => d.name === 'plan')
    expect(plan.description).toBe('The customer’s plan')
    expect(plan.property_type).toBe('String')
  })

  test('Persons: search by distinct id, then the person’s page with flags and events', async () => {
    await go('Persons')
    await page.getByLabel('Search').fill('csv-a')
    await page.getByRole('button', { name: 'Find' }).click()
    await page.getByRole('link', { name: 'csv-a', exact: true }).click()
    await page.getByRole('heading', { name: 'Person csv-a' }).waitFor()
    await page.getByRole('cell', { name: 'console-flag' }).waitFor()
  })

  test('Health names each store up or down', async () => {
    await go('Health')
    await page.getByText(/postgres (up|down)/).waitFor()
    await page.getByText('Backlog').waitFor()
  })

  test('make a personal key (shown once), use it, and revoke it', async () => {
    await go('Settings')
    await page.getByLabel('Label').fill('ci')
    await page.getByRole('button', { name: 'Create key' }).click()
    const shown = page.getByLabel('New personal API key')
    await shown.waitFor()
    const key = (await shown.textContent()) ?? ''
    expect(key).toMatch(/^phx_/)
    const withKey = () => fetch(`${service.url}/api/projects/`, { headers: { authorization: `Bearer ${key}` } })
    expect((await withKey()).status).toBe(200)
    await page.getByRole('button', { name: 'Roll ci' }).waitFor()
    await page.getByRole('button', { name: 'Revoke ci' }).click()
    // asked first, in a dialog whose button repeats the action; Cancel leaves the key working
    const dialog = page.getByRole('dialog', { name: 'Revoke the key ci?' })
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect((await withKey()).status).toBe(200)
    await page.getByRole('button', { name: 'Revoke ci' }).click()
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click()
    await eventually(() => page.getByRole('button', { name: 'Revoke ci' }).count(), (n) => n === 0)
    expect(await page.getByRole('button', { name: 'Revoke ci' }).count()).toBe(0)
    expect((await eventually(withKey, (r) => r.status === 401)).status).toBe(401)
  })

  test('a screenshot of the flags page for the docs', async () => {
    await page.setViewportSize({ width: 1200, height: 720 })
    await go('Feature flags')
    await page.getByRole('switch', { name: 'Enabled console-flag' }).waitFor()
    await page.screenshot({ path: SCREENSHOT })
  })

  test('works in a narrow window', async () => {
    await page.setViewportSize({ width: 380, height: 800 })
    await go('Live events')
    await page.getByRole('heading', { name: 'Live events', level: 1 }).waitFor()
    const overflow = await page.evaluate(() => { const root = (globalThis as any).document.documentElement; return (root.scrollWidth - root.clientWidth) as number })
    expect(overflow).toBeLessThanOrEqual(1)
    await page.setViewportSize({ width: 1200, height: 720 })
  })

  test('reset the project token behind its confirmation: the old one is refused', async () => {
    await go('Settings')
    const token = page.getByLabel('Current project token')
    await expectText(token, PROJECT_KEY)
    await page.getByRole('button', { name: 'Reset token' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('button', { name: 'Reset' }).click()
    await eventually(async () => (await token.textContent()) ?? '', (t) => t !== PROJECT_KEY && t.startsWith('phc_'))
    const fresh = (await token.textContent()) ?? ''
    expect(fresh).not.toBe(PROJECT_KEY)
    expect((await eventually(() => capture('after_reset', 'u', {}, PROJECT_KEY), (s) => s === 401)).valueOf()).toBe(401)
    expect(await capture('after_reset', 'u', {}, fresh)).toBe(200)
  })

  test('with several projects, the "Project" combobox switches between them', async () => {
    expect(await page.getByRole('combobox', { name: 'Project' }).count()).toBe(0)
    const made = await runCli(['project', 'create', '--name', 'Second project'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' })
    expect(made.code).toBe(0)
    await page.reload()
    const project = page.getByRole('combobox', { name: 'Project' })
    await project.waitFor()
    await go('Feature flags')
    await page.getByRole('switch', { name: 'Enabled console-flag' }).waitFor()
    await project.selectOption({ label: 'Second project' })
    await page.getByText('No feature flags yet.').waitFor()
    expect(await page.getByRole('switch', { name: 'Enabled console-flag' }).count()).toBe(0)
    await project.selectOption({ label: 'Default project' })
    await page.getByRole('switch', { name: 'Enabled console-flag' }).waitFor()
  })

  test('sign out ends the session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    const status = await page.evaluate(() => fetch('/api/users/@me/').then((r) => r.status))
    expect(status).toBe(401)
  })

  test('repeated failed sign-ins: the page says "Too many attempts"', async () => {
    for (let i = 0; i < 10; i++) {
      await page.getByLabel('Email').fill('intruder@example.com')
      await page.getByLabel('Password').fill(`guess number ${i}`)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await expectText(page.getByRole('alert'), 'Invalid email or password')
      await page.getByRole('button', { name: 'Sign in' }).isEnabled()
    }
    await page.getByLabel('Password').fill('guess number 10')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expectText(page.getByRole('alert'), 'Too many attempts')
  })

  test('every control on every page has an accessible name', async () => {
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('navigation').waitFor()
    const unnamed: string[] = []
    const pages = ['/events', '/flags', '/flags/new', '/cohorts', '/cohorts/new', '/event-definitions', '/property-definitions', '/persons', '/health', '/settings']
    for (const path of pages) {
      await page.goto(`${service.url}/console${path}`)
      await page.getByRole('heading', { level: 1 }).waitFor()
      await Bun.sleep(300)
      const found = await page.evaluate(() => {
        const doc = (globalThis as any).document
        const out: string[] = []
        for (const el of doc.querySelectorAll('input, select, textarea, button, a[href]')) {
          const labelled = (el.labels && el.labels.length > 0) || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || (el.textContent ?? '').trim()
          if (!labelled) out.push(el.outerHTML.slice(0, 120))
        }
        return out as string[]
      })
      unnamed.push(...found.map((html) => `${path}: ${html}`))
    }
    expect(unnamed).toEqual([])
  })

  test('no page error and no request to any other host', () => {
    expect(pageErrors).toEqual([])
    expect(foreignRequests).toEqual([])
  })
})

async function expectText(locator: ReturnType<Page['getByRole']>, text: string): Promise<void> {
  const deadline = Date.now() + 15_000
  let seen = ''
  while (Date.now() < deadline) {
    seen = (await locator.first().textContent().catch(() => '')) ?? ''
    if (seen.includes(text)) return
    await Bun.sleep(100)
  }
  expect(seen).toContain(text)
}
