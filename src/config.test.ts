import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from './config'

describe('config', () => {
  test('an empty environment gives the documented defaults', () => {
    const c = loadConfig({})
    expect(c.PORT).toBe(8000)
    expect(c.HOST).toBe('0.0.0.0')
    expect(c.DATA_DIR).toBe('./data')
    expect(c.MAX_BODY_BYTES).toBe(20 * 1024 * 1024)
    expect(c.FLUSH_INTERVAL_MS).toBe(1000)
    expect(c.FLUSH_MAX_EVENTS).toBe(20_000)
    expect(c.LOG_LEVEL).toBe('info')
    expect(c.DATABASE_URL).toBeUndefined()
    expect(c.CLICKHOUSE_URL).toBeUndefined()
  })

  test('numbers and booleans are converted from their text', () => {
    const c = loadConfig({ PORT: '9000', TRUST_PROXY: 'true', WAL_FSYNC_INTERVAL_MS: '0' })
    expect(c.PORT).toBe(9000)
    expect(c.TRUST_PROXY).toBe(true)
    expect(c.WAL_FSYNC_INTERVAL_MS).toBe(0)
  })

  test('a bad value stops the boot with a message naming the variable and what it expected', () => {
    let error: unknown
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as Error).message
    expect(message).toContain('PORT: got "eighty", expected an integer')
    expect(message).toContain('LOG_LEVEL: got "loud"')
    expect(message).toContain('one of fatal, error, warn, info, debug, trace, silent')
    expect(message).toContain('DATABASE_URL: got "mysql://x"')
    expect((error as ConfigError).problems).toHaveLength(3)
  })

  test('out-of-range numbers are refused with their bounds', () => {
    expect(() => loadConfig({ PORT: '70000' })).toThrow('<= 65535')
    expect(() => loadConfig({ FLUSH_MAX_EVENTS: '0' })).toThrow('>= 1')
  })

  test('bootstrap keys must have their kind prefix', () => {
    expect(() => loadConfig({ INIT_PROJECT_API_KEY: 'phx_wrongkind123' })).toThrow('INIT_PROJECT_API_KEY')
    expect(() => loadConfig({ INIT_PERSONAL_API_KEY: 'phc_wrongkind123' })).toThrow('INIT_PERSONAL_API_KEY')
    expect(loadConfig({ INIT_PROJECT_API_KEY: 'phc_rightkind123' }).INIT_PROJECT_API_KEY).toBe('phc_rightkind123')
  })

  test('empty variables count as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '' }).PORT).toBe(8000)
  })
})
