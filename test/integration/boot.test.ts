// A failed boot says why, in words, on its last line, and exits non-zero; a Postgres that starts after the
// service is waited for. Real processes (`bun run src/main.ts`), real Postgres.
import { describe, expect, test } from 'bun:test'
import { startPostgres } from '../helpers/postgres-server'
import { sharedPostgres } from '../helpers/shared-servers'
import { freePort, ROOT, spawnService } from '../helpers/spawn-service'
import { freshEnv } from '../helpers/stack'

/** Run the server until it exits (or `withinMs` passes); its exit code and its log lines. */
async function boot(env: Record<string, string>, withinMs = 30_000): Promise<{ code: number | null; lines: any[] }> {
  const proc = Bun.spawn([process.execPath, 'run', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(await freePort()), ...env, LOG_LEVEL: 'info' },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), withinMs)
  const text = await new Response(proc.stderr).text()
  const code = await proc.exited
  clearTimeout(timer)
  return { code, lines: text.trim().split('\n').map((l) => (l.startsWith('{') ? JSON.parse(l) : { msg: l })) }
}

describe('boot failures name their cause', () => {
  test('DATABASE_URL naming a database that does not exist', async () => {
    const pg = await sharedPostgres()
    const url = pg.url.replace(/\/postgres$/, '/no_such_database')
    const { code, lines } = await boot({ ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), DATABASE_URL: url })
    expect(code).not.toBe(0)
    const last = lines.at(-1)
    expect(last.level).toBe('fatal')
    expect(last.msg).toContain('DATABASE_URL names a database that does not exist')
    expect(last.err.message).toContain('no_such_database')
    expect(last.err.code).toBe('3D000')
    expect(last.err.stack).toBeString()
  })

  test('DATABASE_URL unreachable: retried for BOOT_WAIT_MS, one warning per attempt, then a line in words', async () => {
    const port = await freePort()
    const { code, lines } = await boot({
      ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })),
      DATABASE_URL: `postgres://phog:secret-password@127.0.0.1:${port}/phog`,
      BOOT_WAIT_MS: '1500',
    })
    expect(code).not.toBe(0)
    const warnings = lines.filter((l) => l.msg?.includes('not reachable yet'))
    expect(warnings.length).toBeGreaterThanOrEqual(2)
    expect(warnings[0].err.code).toBe('ECONNREFUSED')
    expect(lines.at(-1).msg).toContain(`DATABASE_URL is unreachable (127.0.0.1:${port}/phog)`)
    expect(JSON.stringify(lines)).not.toContain('secret-password')
  })

  test('a Postgres that starts after the service is waited for', async () => {
    const port = await freePort()
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    const starting = spawnService({ ...env, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`, BOOT_WAIT_MS: '60000', LOG_LEVEL: 'warn' })
    await Bun.sleep(1500)
    const pg = await startPostgres({ port })
    try {
      const svc = await starting
      expect((await fetch(`${svc.url}/_ready`)).status).toBe(200)
      expect(svc.logs()).toContain('not reachable yet')
      await svc.stop()
    } finally {
      await pg.destroy()
    }
  })

  test('the port in use is found before anything is changed', async () => {
    const port = await freePort()
    const holder = Bun.serve({ port, hostname: '127.0.0.1', fetch: () => new Response('x') })
    try {
      const { code, lines } = await boot({ ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), PORT: String(port) })
      expect(code).not.toBe(0)
      expect(lines.at(-1).msg).toBe(`could not start: PORT ${port} on HOST 127.0.0.1 is already in use: stop the other process, or set another PORT`)
      expect(lines.some((l) => l.msg === 'postgres migrations applied')).toBe(false)
    } finally {
      holder.stop(true)
    }
  })

  test('a DATA_DIR that cannot be written', async () => {
    const { code, lines } = await boot({ DATA_DIR: '/etc/hostname/data' })
    expect(code).not.toBe(0)
    expect(lines.at(-1).msg).toContain('DATA_DIR /etc/hostname/data is not writable (ENOTDIR)')
  })
})
