// Backup while the service takes events, SIGKILL of the source right after, restore into a new DATA_DIR, and a
// service started on it: every acknowledged event there exactly once, the flags, persons and keys with it (a key
// still authenticates, a session does not), on the SQLite and the DuckDB event store. Real processes throughout.
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventually, startLoad } from '../chaos/load'
import { freshDataDir, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { runCli, spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { tempDir } from '../helpers/temp'

const services: ServiceProcess[] = []
afterAll(async () => {
  for (const s of services) await s.kill().catch(() => undefined)
})

const api = (url: string, path: string, init: { method?: string; json?: unknown; key?: string; headers?: Record<string, string> } = {}) =>
  fetch(`${url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${init.key ?? PERSONAL_KEY}`, 'content-type': 'application/json', ...init.headers },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  })

/** Every stored 'chaos' uuid with how often it is stored, read from the event store's file (its service stopped). */
async function storedUuids(dataDir: string, store: 'sqlite' | 'duckdb'): Promise<Map<string, number>> {
  const query = "SELECT uuid, count(*) FROM events WHERE event = 'chaos' GROUP BY uuid"
  if (store === 'sqlite') {
    const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true })
    try {
      return new Map((db.query(query).values() as [string, number][]).map(([u, n]) => [String(u), Number(n)]))
    } finally {
      db.close()
    }
  }
  const { DuckDBInstance } = await import('@duckdb/node-api')
  const instance = await DuckDBInstance.create(join(dataDir, 'events.duckdb'), { access_mode: 'READ_ONLY' })
  try {
    const c = await instance.connect()
    const rows = (await c.runAndReadAll(query)).getRows()
    c.closeSync()
    return new Map(rows.map(([u, n]) => [String(u), Number(n)]))
  } finally {
    instance.closeSync()
  }
}

async function personDistinctIds(url: string): Promise<string[]> {
  const r = await api(url, '/api/projects/@current/persons/?limit=1000')
  const body = (await r.json()) as { results: { distinct_ids: string[] }[] }
  return body.results.flatMap((p) => p.distinct_ids).sort()
}

for (const store of ['sqlite', 'duckdb'] as const) {
  describe(`backup and restore on the ${store} event store`, () => {
    test('under ingest load, the source SIGKILLed right after: every acknowledged event once, flags, persons, keys', async () => {
      const env = { DATA_DIR: await freshDataDir('embedded'), EMBEDDED_EVENT_STORE: store, INIT_PROJECT_API_KEY: PROJECT_KEY, INIT_PERSONAL_API_KEY: PERSONAL_KEY, LOG_LEVEL: 'warn' }
      const source = await spawnService(env)
      services.push(source)
      const flag = await api(source.url, '/api/projects/@current/feature_flags/', { method: 'POST', json: { key: 'kept-by-backup', filters: { groups: [{ rollout_percentage: 100 }] } } })
      expect(flag.status).toBe(201)
      const newKey = (await (await api(source.url, '/api/personal_api_keys/', { method: 'POST', json: { label: 'made before the backup', scopes: ['*'] } })).json()) as { value: string }
      const identify = await fetch(`${source.url}/capture/`, {
        method: 'POST',
        body: JSON.stringify({ api_key: PROJECT_KEY, event: '$identify', distinct_id: 'backed-up-person', properties: { $set: { plan: 'pro' } } }),
      })
      expect(identify.status).toBe(200)
      expect(await eventually(async () => (await personDistinctIds(source.url)).includes('backed-up-person'), 20_000)).toBe(true)
      // a session recording, stored before the backup: its store (recordings.sqlite) is copied and restored too
      const now = Date.now()
      const replay = await fetch(`${source.url}/s/`, {
        method: 'POST',
        body: JSON.stringify([
          {
            event: '$snapshot',
            properties: {
              $session_id: 'backed-up-session',
              $window_id: 'w-1',
              distinct_id: 'backed-up-person',
              token: PROJECT_KEY,
              $snapshot_data: [
                { type: 4, data: { href: 'https://shop.example/', width: 1280, height: 720 }, timestamp: now - 2000 },
                { type: 3, data: { source: 2, type: 2, id: 5, x: 1, y: 2 }, timestamp: now - 1000 },
              ],
            },
          },
        ]),
      })
      expect(replay.status).toBe(200)
      const recordingIds = async (url: string) =>
        ((await (await api(url, '/api/projects/1/session_recordings/')).json()) as { results: { id: string }[] }).results.map((r) => r.id)
      expect(await eventually(async () => (await recordingIds(source.url)).includes('backed-up-session'), 20_000)).toBe(true)

      const load = startLoad(() => source.url, { concurrency: 4, batchSize: 20, retry: true })
      await Bun.sleep(1500)
      const ackedBefore = load.acked.length
      const to = join(tempDir('phog-backup-'), 'copy')
      const backup = await runCli(['backup', '--to', to], env)
      expect(backup.stderr).toBe('')
      expect(backup.code).toBe(0)
      const summary = JSON.parse(backup.stdout) as { via: string; counts: Record<string, number>; log: { records: number } }
      expect(summary.via).toContain('running service')
      expect(summary.counts.recordings).toBeGreaterThanOrEqual(1)
      // SIGKILL right after: what the source acknowledged after the backup began is not expected in the copy
      await source.kill()
      await load.stop(Date.now())
      const ackedAtStart = load.acked.slice(0, ackedBefore)
      expect(ackedAtStart.length).toBeGreaterThan(100)

      const verify = await runCli(['verify', '--from', to], env)
      expect(verify.stdout + verify.stderr).toContain('"ok":true')
      expect(verify.code).toBe(0)
      expect((JSON.parse(verify.stdout) as { ok: boolean }).ok).toBe(true)

      const restoredEnv = { ...env, DATA_DIR: tempDir('phog-restored-') }
      const restore = await runCli(['restore', '--from', to], restoredEnv)
      expect(restore.stderr).toBe('')
      expect(restore.code).toBe(0)
      expect(JSON.parse(restore.stdout)).toMatchObject({ event_store: store, start_with: { EMBEDDED_EVENT_STORE: store } })

      const restored = await spawnService(restoredEnv)
      services.push(restored)
      const flags = (await (await api(restored.url, '/api/projects/@current/feature_flags/')).json()) as { results: { key: string }[] }
      expect(flags.results.map((f) => f.key)).toContain('kept-by-backup')
      expect(await personDistinctIds(restored.url)).toContain('backed-up-person')
      expect((await api(restored.url, '/api/projects/@current/', { key: newKey.value })).status).toBe(200)
      expect(await recordingIds(restored.url)).toContain('backed-up-session')
      const decide = await fetch(`${restored.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'someone' }) })
      expect(((await decide.json()) as { featureFlags: Record<string, unknown> }).featureFlags['kept-by-backup']).toBe(true)
      // the copied log is replayed by the normal pipeline: once it has caught up, the service stops and the store's own
      // file is read
      const caughtUp = await eventually(async () => {
        const ready = (await (await fetch(`${restored.url}/_ready`)).json()) as { backlog?: { records: number } }
        return ready.backlog?.records === 0
      }, 120_000, 250)
      expect(caughtUp).toBe(true)
      const code = await restored.stop()
      expect({ code, logs: code === 0 ? '' : restored.logs().slice(-3000) }).toEqual({ code: 0, logs: '' })
      const stored = await storedUuids(restoredEnv.DATA_DIR, store)
      const missing = ackedAtStart.filter((u) => !stored.has(u))
      expect(missing.length).toBe(0)
      const doubled = [...stored].filter(([, n]) => n !== 1)
      expect(doubled).toEqual([])
      // nothing stored that was never sent
      const sent = new Set(load.sent)
      expect([...stored.keys()].filter((u) => !sent.has(u))).toEqual([])
    }, 240_000)
  })
}

describe('backup refusals', () => {
  test('verify catches a damaged file; restore refuses a non-empty DATA_DIR and a backup that does not verify; a second backup at once gets 409', async () => {
    const env = { DATA_DIR: await freshDataDir('embedded'), EMBEDDED_EVENT_STORE: 'sqlite', INIT_PROJECT_API_KEY: PROJECT_KEY, INIT_PERSONAL_API_KEY: PERSONAL_KEY, LOG_LEVEL: 'warn' }
    const service = await spawnService(env)
    services.push(service)
    for (let i = 0; i < 5; i++) {
      await fetch(`${service.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'chaos', distinct_id: `u${i}` }) })
    }
    // two at once over HTTP: one is written, the other refused while it runs
    // (one with no body at all, as `curl -X POST` sends it)
    const [first, second] = await Promise.all([api(service.url, '/api/instance/backup/', { method: 'POST', json: {} }), api(service.url, '/api/instance/backup/', { method: 'POST' })])
    const statuses = [first.status, second.status].sort()
    expect(statuses).toEqual([200, 409])
    const refused = [first, second].find((r) => r.status === 409)!
    expect(await refused.json()).toMatchObject({ code: 'backup_running' })
    const written = (await [first, second].find((r) => r.status === 200)!.json()) as { path: string; manifest: { counts: Record<string, number> } }
    expect(written.path.startsWith(join(env.DATA_DIR, 'backups'))).toBe(true)
    expect(written.manifest.counts.personal_api_keys).toBeGreaterThan(0)

    // a key limited to some scopes may not take one
    const scoped = (await (await api(service.url, '/api/personal_api_keys/', { method: 'POST', json: { label: 'reader', scopes: ['feature_flag:read'] } })).json()) as { value: string }
    expect((await api(service.url, '/api/instance/backup/', { method: 'POST', json: {}, key: scoped.value })).status).toBe(403)

    // a full disk: a clear error, and nothing half-written left behind
    const tiny = tempDir('phog-tinyfs-')
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', tiny])
    try {
      const full = await api(service.url, '/api/instance/backup/', { method: 'POST', json: {} }) // DATA_DIR/backups: room
      expect(full.status).toBe(200)
      const cli = await runCli(['backup', '--to', join(tiny, 'copy')], env)
      expect(cli.code).toBe(1)
      expect(cli.stderr).toContain('disk is full')
      expect(cli.stderr).toContain('partial copy was removed')
      expect(readdirSync(tiny)).toEqual([])
    } finally {
      execFileSync('umount', ['-l', tiny])
    }
    await service.stop()

    // without a service, the CLI takes the copy itself
    const offline = join(tempDir('phog-backup-'), 'offline')
    const cli = await runCli(['backup', '--to', offline], env)
    expect(cli.code).toBe(0)
    expect(JSON.parse(cli.stdout)).toMatchObject({ via: 'this command (no service running)' })
    const verified = await runCli(['verify', '--from', offline], env)
    expect(verified.stdout + verified.stderr).toContain('"ok":true')
    expect(verified.code).toBe(0)

    // restore refuses a DATA_DIR that holds anything, and says why
    const busy = tempDir('phog-restore-busy-')
    writeFileSync(join(busy, 'something'), 'x')
    const refusedRestore = await runCli(['restore', '--from', offline], { ...env, DATA_DIR: busy })
    expect(refusedRestore.code).not.toBe(0)
    expect(refusedRestore.stderr).toContain('is not empty')

    // one byte changed in the event store copy: verify names the file, restore refuses
    const file = join(offline, 'events.sqlite')
    const bytes = readFileSync(file)
    bytes[bytes.length - 100] ^= 0xff
    writeFileSync(file, bytes)
    const damaged = await runCli(['verify', '--from', offline], env)
    expect(damaged.code).toBe(1)
    const report = JSON.parse(damaged.stdout) as { ok: boolean; problems: string[] }
    expect(report.ok).toBe(false)
    expect(report.problems.join('\n')).toContain('events.sqlite: checksum differs')
    const target = tempDir('phog-restore-')
    const refusedDamaged = await runCli(['restore', '--from', offline], { ...env, DATA_DIR: target })
    expect(refusedDamaged.code).not.toBe(0)
    expect(refusedDamaged.stderr).toContain('does not verify')
    expect(existsSync(join(target, 'pg'))).toBe(false)
  }, 180_000)
})
