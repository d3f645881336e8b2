// The exit codes docs/operations.md promises: 2 for an invalid configuration (every bad variable named), 1 for any
// other failed boot (its last line says what to change), for the server and the CLI alike.
import { describe, expect, test } from 'bun:test'
import { ROOT, runCli } from '../helpers/spawn-service'
import { freshEnv } from '../helpers/stack'

async function boot(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn([process.execPath, 'run', 'src/main.ts'], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdout: 'ignore', stderr: 'pipe' })
  const stderr = new Response(proc.stderr).text()
  const code = await Promise.race([proc.exited, Bun.sleep(120_000).then(() => -1)])
  if (code === -1) proc.kill('SIGKILL')
  return { code, stderr: await stderr }
}

describe('exit codes', () => {
  test('an invalid configuration exits 2, naming every bad variable (server and CLI)', async () => {
    const env = { DATA_DIR: '/tmp/phog-never-created', PORT: 'eighty', CLICKHOUSE_PASSWORD: 'x' }
    const server = await boot(env)
    expect(server.code).toBe(2)
    expect(server.stderr).toContain('invalid configuration')
    expect(server.stderr).toContain('PORT: got "eighty"')
    const cli = await runCli(['project', 'list'], env)
    expect(cli.code).toBe(2)
    expect(cli.stderr).toContain('PORT: got "eighty"')
  })

  test('any other failed boot exits 1 and its last line says why', async () => {
    const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    try {
      const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
      const r = await boot({ ...env, HOST: '127.0.0.1', PORT: String(listener.port), LOG_LEVEL: 'info' })
      expect(r.code).toBe(1)
      const lines = r.stderr.trim().split('\n')
      const last = JSON.parse(lines.at(-1)!) as { level: string; msg: string }
      expect(last.level).toBe('fatal')
      expect(last.msg).toContain('already in use')
    } finally {
      listener.stop(true)
    }
  })
})
