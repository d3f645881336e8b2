// An API document a generator can use: openapi-typescript turns the served /swagger/json into types, tsc (the
// project's TypeScript) type-checks a small openapi-fetch client against them (including calls the types must
// refuse), and the client creates a flag, sends a batch and finds its events' definitions on a real server process.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { ROOT, spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { tempDir } from '../helpers/temp'

const CLIENT_DIR = join(ROOT, 'test/e2e/openapi-client')

interface Client {
  createFlag(key: string, rolloutPercentage: number): Promise<Record<string, unknown>>
  sendBatch(projectKey: string, distinctId: string, events: string[]): Promise<number>
  eventDefinitions(search: string): Promise<{ count: number; names: string[] }>
}

async function run(cmd: string[]): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, output: `${stdout}${stderr}` }
}

describe('a client generated from /swagger/json', () => {
  let service: ServiceProcess
  beforeAll(async () => {
    service = await spawnService({ ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), FLUSH_INTERVAL_MS: '200' })
  })
  afterAll(async () => {
    await service?.stop()
  })

  test('openapi-typescript generates its types; tsc type-checks the openapi-fetch client against them', async () => {
    const document = join(tempDir('phog-openapi-'), 'openapi.json')
    await Bun.write(document, await (await fetch(`${service.url}/swagger/json`)).text())
    const generate = await run([process.execPath, 'run', 'test/helpers/openapi-types.ts', document, join(CLIENT_DIR, 'schema.d.ts')])
    expect(generate.output).toBe('')
    expect(generate.code).toBe(0)
    const types = await Bun.file(join(CLIENT_DIR, 'schema.d.ts')).text()
    expect(types).toContain('"/api/projects/{project_id}/feature_flags/"')
    expect(types).toMatch(/\bFlagWrite: \{/)
    const check = await run([join(ROOT, 'node_modules/.bin/tsc'), '-p', join(CLIENT_DIR, 'tsconfig.json')])
    expect(check.output).toBe('')
    expect(check.code).toBe(0)
  })

  test('the client creates a flag, sends a batch and lists the event definitions it made', async () => {
    // loaded by path: the root typecheck leaves the client out (its types exist only once generated)
    const { phogClient } = (await import(join(CLIENT_DIR, 'client.ts'))) as { phogClient: (url: string, key: string) => Client }
    const client = phogClient(service.url, PERSONAL_KEY)
    const flag = await client.createFlag('generated-client-flag', 40)
    expect(flag).toMatchObject({ key: 'generated-client-flag', active: true, rollout_percentage: 40, is_simple_flag: true })
    expect(await client.sendBatch(PROJECT_KEY, 'user-1', ['openapi client signed up', 'openapi client paid'])).toBe(1)
    // definitions are learned when the batch is flushed: ask until they are there (bounded)
    let found: string[] = []
    for (let i = 0; i < 100 && found.length < 2; i++) {
      found = (await client.eventDefinitions('openapi client')).names
      if (found.length < 2) await Bun.sleep(100)
    }
    expect(found.sort()).toEqual(['openapi client paid', 'openapi client signed up'])
    // errors come back typed as the ErrorBody
    await expect(client.createFlag('generated-client-flag', 40)).rejects.toThrow(/create flag: 400/)
  })
})
