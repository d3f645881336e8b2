// A password with any character reaches ClickHouse as the server reads it (HTTP basic auth, UTF-8), from
// CLICKHOUSE_URL + CLICKHOUSE_PASSWORD as compose passes them.
import { expect, test } from 'bun:test'
import { loadConfig } from '../config'
import { ClickHouseEventStore } from './clickhouse'

test('CLICKHOUSE_PASSWORD with @, /, :, %, # and spaces arrives intact', async () => {
  const seen: (string | null)[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      seen.push(request.headers.get('authorization'))
      return new Response('Code: 516. Authentication failed', { status: 403 })
    },
  })
  try {
    const password = ' p@ss/w:rd%41#?ü '
    const config = loadConfig({ CLICKHOUSE_URL: `http://phog@127.0.0.1:${server.port}/phog`, CLICKHOUSE_PASSWORD: password })
    const store = new ClickHouseEventStore(config.CLICKHOUSE_URL!)
    await expect(store.init()).rejects.toThrow()
    await store.close()
    expect(seen.length).toBeGreaterThan(0)
    const basic = Buffer.from(seen[0]!.replace(/^Basic /, ''), 'base64').toString('utf8')
    expect(basic).toBe(`phog:${password}`)
  } finally {
    server.stop(true)
  }
})
