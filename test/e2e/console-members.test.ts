// Members in the console, in Debian's Chromium by roles and names, on a store made by the README's first steps (the
// CLI's project and key, then the first user with a password): the owner sees the CLI's key in Settings, adds a
// member with a first password, changes their role, removes them behind a dialog; a member is offered none of it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { fileURLToPath } from 'node:url'
import { launchBrowser } from './browser'
import { startService, type E2EService } from './service'
import { eventually, signedInPage, tableRows } from './console-session'
import { freshEnv } from '../helpers/stack'
import { ROOT, runCli } from '../helpers/spawn-service'

const OWNER = 'you@example.com'
const PASSWORD = 'a long passphrase'
const SCREENSHOT = fileURLToPath(new URL('../../docs/console-members.png', import.meta.url))

let service: E2EService
let browser: Browser
let owner: Page
const pageErrors: string[] = []

async function userCreate(env: Record<string, string>, email: string, password: string): Promise<number> {
  const proc = Bun.spawn([process.execPath, 'run', 'src/cli.ts', 'user', 'create', '--email', email, '--password-stdin'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdin: new Blob([`${password}\n`]),
    stdout: 'ignore',
    stderr: 'ignore',
  })
  return proc.exited
}

beforeAll(async () => {
  // the README's order: project, key, then the first console user (no INIT_* keys)
  const env = { ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), INIT_PROJECT_API_KEY: '', INIT_PERSONAL_API_KEY: '' }
  expect((await runCli(['project', 'create', '--name', 'My app'], env)).code).toBe(0)
  expect((await runCli(['personal-key', 'create', '--label', 'admin'], env)).code).toBe(0)
  expect(await userCreate(env, OWNER, PASSWORD)).toBe(0)
  ;[service, browser] = await Promise.all([startService('embedded', env), launchBrowser()])
  owner = await signedInPage(browser, service, OWNER, PASSWORD)
  owner.on('pageerror', (error) => pageErrors.push(error.message))
})

afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

const go = (page: Page, label: string) => page.getByRole('navigation').getByRole('link', { name: label, exact: true }).click()

describe('console members', () => {
  test("the README's first owner sees the key the CLI printed before they existed", async () => {
    await go(owner, 'Settings')
    const keys = owner.getByRole('table', { name: 'Personal API keys' })
    await keys.waitFor()
    expect((await tableRows(keys)).map((row) => row[0])).toEqual(['admin'])
    await owner.getByRole('button', { name: 'Revoke admin' }).waitFor()
  })

  test('the owner adds a member with a first password, changes the role, and the member signs in', async () => {
    const members = owner.getByRole('table', { name: 'Members' })
    await members.waitFor()
    await owner.getByLabel('Email', { exact: true }).fill('ana@example.com')
    await owner.getByLabel('Role', { exact: true }).selectOption({ label: 'Admin' })
    await owner.getByLabel('First password').fill('ana first password')
    await owner.getByRole('button', { name: 'Add member' }).click()
    await owner.getByRole('status').filter({ hasText: 'ana@example.com was added as admin.' }).waitFor()
    const role = owner.getByRole('combobox', { name: 'Role of ana@example.com' })
    await role.waitFor()
    expect(await role.inputValue()).toBe('8')
    // the sole owner's own row offers no way to step down or leave
    expect(await owner.getByRole('combobox', { name: `Role of ${OWNER}` }).count()).toBe(0)
    expect(await owner.getByRole('button', { name: `Remove ${OWNER}` }).count()).toBe(0)
    await role.selectOption({ label: 'Member' })
    // the change is stored: a fresh load of the page shows it
    await eventually(async () => {
      await owner.reload()
      return owner.getByRole('combobox', { name: 'Role of ana@example.com' }).inputValue()
    }, (v) => v === '1')
    expect(await role.inputValue()).toBe('1')
    await owner.locator('section[aria-labelledby="members-title"]').screenshot({ path: SCREENSHOT })

    const ana = await signedInPage(browser, service, 'ana@example.com', 'ana first password')
    await go(ana, 'Settings')
    const seen = ana.getByRole('table', { name: 'Members' })
    await seen.waitFor()
    await eventually(() => tableRows(seen), (rows) => rows.length === 2)
    expect((await tableRows(seen)).map((row) => row.slice(0, 2))).toEqual([
      [OWNER, 'Owner'],
      ['ana@example.com', 'Member'],
    ])
    // a member is offered nothing it cannot do
    expect(await ana.getByRole('button', { name: 'Add member' }).count()).toBe(0)
    expect(await ana.getByRole('combobox', { name: /^Role of / }).count()).toBe(0)
    expect(await ana.getByRole('button', { name: /^Remove / }).count()).toBe(0)
    await ana.close()
  })

  test('removing asks first, then the row goes', async () => {
    await owner.getByRole('button', { name: 'Remove ana@example.com' }).click()
    const dialog = owner.getByRole('dialog', { name: 'Remove ana@example.com from the organization?' })
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect(await owner.getByRole('button', { name: 'Remove ana@example.com' }).count()).toBe(1)
    await owner.getByRole('button', { name: 'Remove ana@example.com' }).click()
    await dialog.getByRole('button', { name: 'Remove', exact: true }).click()
    await eventually(() => owner.getByRole('button', { name: 'Remove ana@example.com' }).count(), (n) => n === 0)
    const rows = await tableRows(owner.getByRole('table', { name: 'Members' }))
    expect(rows.map((row) => row[0])).toEqual([OWNER])
  })

  test('no page error', () => {
    expect(pageErrors).toEqual([])
  })
})
