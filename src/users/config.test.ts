// INIT_ADMIN_EMAIL / INIT_ADMIN_PASSWORD as the configuration reads them.
import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../config'

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env)
    return []
  } catch (error) {
    return (error as ConfigError).problems
  }
}

describe('INIT_ADMIN_* configuration', () => {
  test('both together are accepted', () => {
    const c = loadConfig({ INIT_ADMIN_EMAIL: 'admin@example.com', INIT_ADMIN_PASSWORD: 'long enough' })
    expect(c.INIT_ADMIN_EMAIL).toBe('admin@example.com')
    expect(c.INIT_ADMIN_PASSWORD).toBe('long enough')
  })

  test('one without the other stops the boot', () => {
    expect(problems({ INIT_ADMIN_EMAIL: 'admin@example.com' }).join()).toContain('set both or neither')
    expect(problems({ INIT_ADMIN_PASSWORD: 'long enough' }).join()).toContain('set both or neither')
  })

  test('a short password is refused without being echoed', () => {
    const found = problems({ INIT_ADMIN_EMAIL: 'admin@example.com', INIT_ADMIN_PASSWORD: 'secret1' }).join('\n')
    expect(found).toContain('INIT_ADMIN_PASSWORD')
    expect(found).toContain('a value of 7 characters')
    expect(found).not.toContain('secret1')
  })

  test('an email needs an @', () => {
    expect(problems({ INIT_ADMIN_EMAIL: 'admin', INIT_ADMIN_PASSWORD: 'long enough' }).join()).toContain('INIT_ADMIN_EMAIL')
  })
})
