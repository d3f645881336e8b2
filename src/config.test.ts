import { describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { ConfigError, loadConfig } from './config'
import { parseClickHouseUrl } from './events/clickhouse-target'

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

  test('passwords apart from the URLs: any character reaches the driver, spaces included', () => {
    const hard = ' p@ss/w:rd%41#?&=+ü\'" '
    const c = loadConfig({
      DATABASE_URL: 'postgres://phog@postgres:5432/phog',
      DATABASE_PASSWORD: hard,
      CLICKHOUSE_URL: 'http://phog:old@clickhouse:8123/phog',
      CLICKHOUSE_PASSWORD: hard,
    })
    // what postgres.js makes of the URL (no connection is opened until a query)
    const sql = postgres(c.DATABASE_URL!)
    expect((sql.options as unknown as { pass: string }).pass).toBe(hard)
    expect(sql.options.user).toBe('phog')
    expect(sql.options.host).toEqual(['postgres'])
    expect(sql.options.database).toBe('phog')
    const ch = parseClickHouseUrl(c.CLICKHOUSE_URL!)
    expect(ch).toEqual({ url: 'http://clickhouse:8123', username: 'phog', password: hard, database: 'phog' })
  })

  test('a password without its URL is a configuration error', () => {
    expect(() => loadConfig({ DATABASE_PASSWORD: 'x' })).toThrow('DATABASE_PASSWORD: set, but DATABASE_URL is not')
    expect(() => loadConfig({ CLICKHOUSE_PASSWORD: 'x' })).toThrow('CLICKHOUSE_PASSWORD')
  })
})
