// The DATA_DIR belongs to one live process, and the embedded database is reachable by nobody else. Real
// server processes; a connection attempt as another user (`nobody`).
import { describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, ROOT, spawnService } from '../helpers/spawn-service'
import { freshEnv, PERSONAL_KEY } from '../helpers/stack'

async function bootAndExit(env: Record<string, string>): Promise<{ code: number | null; last: any }> {
  const proc = Bun.spawn([process.execPath, 'run', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(await freePort()), ...env, LOG_LEVEL: 'info' },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000)
  const text = await new Response(proc.stderr).text()
  const code = await proc.exited
  clearTimeout(timer)
  return { code, last: JSON.parse(text.trim().split('\n').at(-1)!) }
}

/** Connect to a Unix socket as user `nobody`; what Python says. */
async function connectAsNobody(path: string): Promise<string> {
  const script = `import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n  s.connect(${JSON.stringify(path)})\n  print("connected")\nexcept Exception as e:\n  print(type(e).__name__)`
  const proc = Bun.spawn(['runuser', '-u', 'nobody', '--', 'python3', '-c', script], { stdout: 'pipe', stderr: 'pipe' })
  return (await new Response(proc.stdout).text()).trim() + (await new Response(proc.stderr).text()).trim()
}

describe('the DATA_DIR lock is held by the kernel', () => {
  test('a stale lock file naming a live pid (1) never blocks a start', async () => {
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    writeFileSync(join(env.DATA_DIR!, 'pg.lock'), JSON.stringify({ pid: 1, path: '/nonexistent/pg.sock' }))
    const svc = await spawnService(env)
    try {
      expect((await fetch(`${svc.url}/api/projects/`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })).status).toBe(200)
    } finally {
      await svc.stop()
    }
  })

  test('two servers on one DATA_DIR: the second refuses, naming the holder', async () => {
    for (const postgres of ['embedded', 'real'] as const) {
      const env = await freshEnv({ postgres, clickhouse: 'embedded' })
      const first = await spawnService(env)
      try {
        const { code, last } = await bootAndExit(env)
        expect(code).not.toBe(0)
        expect(last.msg).toBe(`could not start: DATA_DIR ${env.DATA_DIR} is in use by another live process (pid ${first.pid}): stop it, or give this one its own DATA_DIR`)
      } finally {
        await first.stop()
      }
    }
  })
})

describe('the embedded database has no door for other users', () => {
  test('its socket is in a directory only the server user can enter, on every path length, never on TCP', async () => {
    for (const long of [false, true]) {
      const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
      if (long) {
        env.DATA_DIR = join(env.DATA_DIR!, 'a-very-long-directory-name-'.repeat(4), 'data')
        mkdirSync(env.DATA_DIR, { recursive: true })
      }
      const svc = await spawnService(env)
      try {
        const info = JSON.parse(readFileSync(join(env.DATA_DIR!, 'pg.lock'), 'utf8'))
        expect(Object.keys(info).sort()).toEqual(['path', 'pid'])
        expect(Buffer.byteLength(info.path)).toBeLessThan(100)
        expect(statSync(join(info.path, '..')).mode & 0o777).toBe(0o700)
        expect(await connectAsNobody(info.path)).toBe('PermissionError')
        // the server itself, the CLI and the flush worker still get in
        expect((await fetch(`${svc.url}/api/projects/`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })).status).toBe(200)
      } finally {
        await svc.stop()
      }
    }
  })
})
