// The service and its CLI run as a user runs them: separate processes, configured by environment.
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address()
      const port = typeof address === 'object' && address ? address.port : 0
      srv.close(() => resolve(port))
    })
  })
}

export interface ServiceProcess {
  url: string
  port: number
  pid: number
  /** everything the process wrote to stderr (its JSON logs) */
  logs(): string
  /** SIGTERM and wait for exit; returns the exit code */
  stop(): Promise<number>
  /** SIGKILL and wait */
  kill(): Promise<void>
  exited: Promise<number>
}

const live = new Set<ReturnType<typeof Bun.spawn>>()

/** Kill every service process a test left running (called from the preload's global afterAll). */
export async function killSpawnedServices(): Promise<void> {
  const procs = [...live]
  for (const p of procs) p.kill('SIGKILL')
  await Promise.all(procs.map((p) => p.exited))
}

export async function spawnService(env: Record<string, string>, options: { port?: number; waitMs?: number } = {}): Promise<ServiceProcess> {
  const port = options.port ?? (await freePort())
  const proc = Bun.spawn([process.execPath, 'run', 'src/main.ts'], {
    cwd: ROOT,
    // as `npm start` runs it (the JSC heap hint included)
    env: { ...process.env, LOG_LEVEL: 'info', BUN_JSC_forceRAMSize: '268435456', BUN_JSC_largeHeapSize: '20971520', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  live.add(proc)
  let stderr = ''
  const decoder = new TextDecoder()
  const read = (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) stderr += decoder.decode(chunk, { stream: true })
  })().catch(() => undefined)
  // exited once the process is gone and its last log lines are read (they could arrive after the exit code)
  const exited = Promise.all([proc.exited, read]).then(([code]) => {
    live.delete(proc)
    return code
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + (options.waitMs ?? 60_000)
  let up = false
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) break
    try {
      const r = await fetch(`${url}/_health`, { signal: AbortSignal.timeout(1000) })
      if (r.ok) {
        up = true
        break
      }
    } catch {
      // not listening yet
    }
    await Bun.sleep(100)
  }
  if (!up) {
    proc.kill('SIGKILL')
    await exited
    throw new Error(`service did not become healthy on port ${port}:\n${stderr.slice(-4000)}`)
  }
  return {
    url,
    port,
    pid: proc.pid,
    logs: () => stderr,
    exited,
    async stop() {
      proc.kill('SIGTERM')
      return exited
    },
    async kill() {
      proc.kill('SIGKILL')
      await exited
    },
  }
}

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

export async function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  const proc = Bun.spawn([process.execPath, 'run', 'src/cli.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, stdout, stderr }
}
