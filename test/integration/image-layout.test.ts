// The image's own command lines, run in the image's layout: the files the Dockerfile copies, dependencies
// installed with the Dockerfile's own `npm ci` flags (--ignore-scripts: the `bun` package's postinstall never
// runs, so nothing may rely on node_modules/.bin/bun), Bun from PATH as in oven/bun, a non-root user, the
// Dockerfile's ENV. The server runs with the image's CMD; the admin CLI is `phog` on PATH, as
// `docker compose exec phog phog …` runs it. (No Docker engine here: the layout is rebuilt, not the image.)
import { beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, chownSync, cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { healthy } from '../helpers/process-watch'
import { freePort, ROOT } from '../helpers/spawn-service'
import { tempDir } from '../helpers/temp'

const NOBODY = 65534
/** Running as root (CI, the build machines), the image's non-root user is played by nobody; otherwise the current user is non-root already. */
const ROOT_USER = process.getuid?.() === 0
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
const stages = dockerfile.split(/^FROM /m).slice(1)
const [depsStage, finalStage] = [stages[0]!, stages[stages.length - 1]!]

/** `RUN npm ci …` of the dependencies stage, as argv (up to the first &&). */
function installCommand(): string[] {
  const run = /^RUN (npm ci[^&\n]*)/m.exec(depsStage)
  if (!run) throw new Error('no `RUN npm ci` in the Dockerfile')
  return run[1]!.trim().split(/\s+/)
}

/** COPY lines of the final stage that take files from the build context: [sources, destination]. */
function copies(): [string[], string][] {
  return [...finalStage.matchAll(/^COPY (?!--from)(.+)$/gm)].map((m) => {
    const parts = m[1]!.trim().split(/\s+/)
    return [parts.slice(0, -1), parts[parts.length - 1]!]
  })
}

function imageEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const block of finalStage.matchAll(/^ENV ((?:.*\\\n)*.*)$/gm)) {
    for (const m of block[1]!.matchAll(/([A-Za-z_]+)=(\S+)/g)) env[m[1]!] = m[2]!
  }
  return env
}

function cmd(): string[] {
  const m = /^CMD (\[.*\])$/m.exec(finalStage)
  if (!m) throw new Error('no CMD in the Dockerfile')
  return JSON.parse(m[1]!)
}

/** As the image's non-root user: argv run under setpriv with the given environment. */
function asNobody(argv: string[]): string[] {
  if (!ROOT_USER) return argv
  return ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...argv]
}

let root: string
let app: string
let env: Record<string, string>
beforeAll(async () => {
  root = tempDir('phog-image-')
  chmodSync(root, 0o755)
  app = join(root, 'app')
  mkdirSync(app)
  // the dependencies stage: package files, then the Dockerfile's own install command
  for (const f of ['package.json', 'package-lock.json']) cpSync(join(ROOT, f), join(app, f))
  const install = Bun.spawnSync(installCommand(), { cwd: app, stdout: 'pipe', stderr: 'pipe' })
  if (install.exitCode !== 0) throw new Error(`install failed: ${install.stderr.toString()}`)
  // the final stage's COPY lines, from this checkout
  for (const [sources, destination] of copies()) {
    for (const source of sources) {
      const target = destination.endsWith('/') ? join(app, destination, source.split('/').pop()!) : join(app, destination)
      cpSync(join(ROOT, source), target, { recursive: true })
    }
  }
  // Bun on PATH as the official image has it, and `phog` linked onto PATH as the Dockerfile links it
  const bin = join(root, 'usr-local-bin')
  // readable by the non-root user whatever this test process's umask (the service's code sets 077 when it boots in it)
  mkdirSync(bin, { mode: 0o755 })
  chmodSync(bin, 0o755)
  symlinkSync(process.execPath, join(bin, 'bun'))
  const link = /ln -s (\S+) \/usr\/local\/bin\/(\S+)/.exec(finalStage)
  expect(link).not.toBeNull()
  symlinkSync(join(app, link![1]!.replace(/^\/app\//, '')), join(bin, link![2]!))
  // the data volume and HOME belong to the non-root user; the code is only readable by it
  const data = join(root, 'data')
  const home = join(root, 'home')
  for (const dir of [data, home]) {
    mkdirSync(dir)
    if (ROOT_USER) chownSync(dir, NOBODY, NOBODY)
  }
  Bun.spawnSync(['chmod', '-R', 'a+rX,go-w', app])
  env = {
    ...imageEnv(),
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: home,
    DATA_DIR: data,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  }
})

async function run(argv: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(asNobody(argv), { cwd: app, env: { ...env, ...extraEnv }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

describe("the image's layout", () => {
  test('the install skipped the bun package\'s postinstall, as in the image: nothing may rely on it', () => {
    expect(installCommand()).toContain('--ignore-scripts')
    expect(installCommand()).toContain('--omit=dev')
  })

  test('the CMD serves as a non-root user; `phog` on PATH creates and lists projects beside it; SIGTERM drains and exits 0', async () => {
    const port = await freePort()
    const server = Bun.spawn(asNobody(cmd()), { cwd: app, env: { ...env, PORT: String(port) }, stdout: 'ignore', stderr: 'pipe' })
    const logs = new Response(server.stderr).text()
    try {
      expect(await healthy(`http://127.0.0.1:${port}`, 120_000)).toBe(true)
      // the documented one-liner: `docker compose exec phog phog project create --name "My app"`
      const created = await run(['phog', 'project', 'create', '--name', 'My app'])
      if (created.code !== 0) console.log('CLI STDERR', created.stderr)
      expect(created.stderr).not.toContain('postinstall')
      expect(created.code).toBe(0)
      const project = JSON.parse(created.stdout)
      expect(project.api_token).toStartWith('phc_')
      const listed = await run(['phog', 'project', 'list'])
      expect(listed.code).toBe(0)
      expect(JSON.parse(listed.stdout).results.map((p: { name: string }) => p.name)).toContain('My app')
      const key = await run(['phog', 'personal-key', 'create', '--label', 'ops'])
      expect(key.code).toBe(0)
      expect(JSON.parse(key.stdout).key).toStartWith('phx_')
      // the new key and project work against the running server at once
      const r = await fetch(`http://127.0.0.1:${port}/api/projects/`, { headers: { authorization: `Bearer ${JSON.parse(key.stdout).key}` } })
      expect(r.status).toBe(200)
      const usage = await run(['phog', 'no-such-command'])
      expect(usage.code).toBe(64)
    } finally {
      server.kill('SIGTERM')
    }
    expect(await server.exited).toBe(0)
    expect(await logs).toContain('"msg":"stopped"')
  })
})
