// Proves the throwaway-server helpers against the real binaries on this machine.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import { startClickHouse, type ClickHouseServer } from './clickhouse-server'
import { startPostgres, type PostgresServer } from './postgres-server'
import { sharedClickHouse, sharedPostgres } from './shared-servers'

const HELPERS_DIR = import.meta.dir

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' })
    sock.once('connect', () => {
      sock.destroy()
      resolve(true)
    })
    sock.once('error', () => resolve(false))
  })
}

function processAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2)[0]
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

async function eventually(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (check()) return true
    await Bun.sleep(25)
  }
  return check()
}

async function withSql<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined })
  try {
    return await fn(sql)
  } finally {
    await sql.end({ timeout: 1 })
  }
}

describe('startPostgres', () => {
  let pg: PostgresServer
  let startMs = 0

  beforeAll(async () => {
    const t0 = performance.now()
    pg = await startPostgres()
    startMs = performance.now() - t0
    console.log(`[servers.test] Postgres started in ${startMs.toFixed(0)} ms (initdb + start) on port ${pg.port}`)
  })

  afterAll(async () => {
    await pg?.destroy()
  })

  test('starts and accepts a query', async () => {
    expect(pg.url).toBe(`postgres://postgres@127.0.0.1:${pg.port}/postgres`)
    expect(path.basename(path.dirname(pg.dataDir))).toStartWith('phog-pg-')
    expect(fs.existsSync(path.join(pg.dataDir, 'PG_VERSION'))).toBe(true)
    const rows = await withSql(pg.url, (sql) => sql<{ one: number; v: string }[]>`select 1 as one, version() as v`)
    expect(rows[0]?.one).toBe(1)
    expect(rows[0]?.v).toContain('PostgreSQL')
  })

  test('createDatabase isolates databases', async () => {
    const [a, b, c] = await Promise.all([pg.createDatabase(), pg.createDatabase(), pg.createDatabase('Named_DB')])
    expect(new Set([a, b, c]).size).toBe(3)
    expect(c).toBe(`postgres://postgres@127.0.0.1:${pg.port}/Named_DB`)
    await withSql(a, async (sql) => {
      await sql`create table items (id int primary key)`
      await sql`insert into items values (1), (2)`
    })
    const inB = await withSql(b, (sql) => sql<{ t: string | null }[]>`select to_regclass('items')::text as t`)
    expect(inB[0]?.t).toBeNull()
    const inA = await withSql(a, (sql) => sql<{ n: number }[]>`select count(*)::int as n from items`)
    expect(inA[0]?.n).toBe(2)
    const dbName = await withSql(c, (sql) => sql<{ d: string }[]>`select current_database() as d`)
    expect(dbName[0]?.d).toBe('Named_DB')
    await expect(pg.createDatabase('Named_DB')).rejects.toThrow(/already exists/)
    await expect(pg.createDatabase('bad name')).rejects.toThrow(/not a plain database name/)
  })

  test('stop -> start keeps the data and the port', async () => {
    const url = await pg.createDatabase()
    await withSql(url, async (sql) => {
      await sql`create table kept (v text)`
      await sql`insert into kept values ('before stop')`
    })
    const port = pg.port
    const t0 = performance.now()
    await pg.stop()
    const stopMs = performance.now() - t0
    expect(await canConnect(port)).toBe(false)
    await pg.stop() // stopping a stopped server is a no-op
    const t1 = performance.now()
    await pg.start()
    const restartMs = performance.now() - t1
    console.log(`[servers.test] Postgres stop ${stopMs.toFixed(0)} ms, restart ${restartMs.toFixed(0)} ms`)
    expect(pg.port).toBe(port)
    const rows = await withSql(url, (sql) => sql<{ v: string }[]>`select v from kept`)
    expect(rows.map((r) => r.v)).toEqual(['before stop'])
  })

  test('kill -> start recovers committed data', async () => {
    const url = await pg.createDatabase()
    await withSql(url, async (sql) => {
      await sql`create table crashy (n int)`
      await sql`insert into crashy select generate_series(1, 1000)`
    })
    // A connection that is open at the moment of the crash.
    const open = postgres(url, { max: 1, onnotice: () => undefined })
    await open`select 1`
    const t0 = performance.now()
    await pg.kill()
    expect(await canConnect(pg.port)).toBe(false)
    await open.end({ timeout: 1 }).catch(() => undefined)
    await pg.start()
    console.log(`[servers.test] Postgres kill + crash-recovery start ${(performance.now() - t0).toFixed(0)} ms`)
    const rows = await withSql(url, (sql) => sql<{ n: number }[]>`select count(*)::int as n from crashy`)
    expect(rows[0]?.n).toBe(1000)
  })

  test('destroy removes the temp dir and is idempotent', async () => {
    const other = await startPostgres()
    const dir = path.dirname(other.dataDir)
    const port = other.port
    expect(fs.existsSync(dir)).toBe(true)
    await Promise.all([other.destroy(), other.destroy()])
    await other.destroy()
    expect(fs.existsSync(dir)).toBe(false)
    expect(await canConnect(port)).toBe(false)
    await expect(other.start()).rejects.toThrow(/destroyed/)
  })
})

describe('startClickHouse', () => {
  let ch: ClickHouseServer

  beforeAll(async () => {
    const t0 = performance.now()
    ch = await startClickHouse()
    console.log(
      `[servers.test] ClickHouse ${ch.version} started in ${(performance.now() - t0).toFixed(0)} ms ` +
        `(http ${ch.httpPort}, tcp ${ch.tcpPort})`,
    )
  })

  afterAll(async () => {
    await ch?.destroy()
  })

  test('starts and reports its version', async () => {
    expect(ch.url).toBe(`http://default:@127.0.0.1:${ch.httpPort}`)
    expect(ch.tcpPort).not.toBe(ch.httpPort)
    expect(path.basename(path.dirname(ch.dataDir))).toStartWith('phog-ch-')
    expect(ch.version).toMatch(/^18\.16\.\d+/)
    expect((await ch.query('SELECT version()')).trim()).toBe(ch.version)
    expect(await canConnect(ch.tcpPort)).toBe(true)
  })

  test('creates a table and reads it back over HTTP', async () => {
    await ch.query('CREATE DATABASE IF NOT EXISTS t1')
    await ch.query(
      "CREATE TABLE t1.events (id UInt32, name String, ts DateTime('UTC')) ENGINE = MergeTree ORDER BY (id)",
    )
    await ch.query(
      'INSERT INTO t1.events FORMAT JSONEachRow\n' +
        '{"id":1,"name":"a","ts":"2024-01-02 03:04:05"}\n{"id":2,"name":"b","ts":"2024-01-02 03:04:06"}',
    )
    const out = await ch.query('SELECT id, name, ts FROM t1.events ORDER BY id FORMAT JSONEachRow')
    const rows = out.trim().split('\n').map((l) => JSON.parse(l) as { id: number; name: string; ts: string })
    expect(rows).toEqual([
      { id: 1, name: 'a', ts: '2024-01-02 03:04:05' },
      { id: 2, name: 'b', ts: '2024-01-02 03:04:06' },
    ])
  })

  test('query throws with the ClickHouse error text', async () => {
    await expect(ch.query('SELECT no_such_function()')).rejects.toThrow(/HTTP 404.*Unknown function/s)
    await expect(ch.query('SELECT * FROM nope.nothing')).rejects.toThrow(/doesn't exist/)
  })

  test('stop -> start keeps the data and the ports', async () => {
    await ch.query('CREATE TABLE default.kept (x UInt8) ENGINE = MergeTree ORDER BY x')
    await ch.query('INSERT INTO default.kept VALUES (1), (2), (3)')
    const { httpPort, tcpPort } = ch
    const t0 = performance.now()
    await ch.stop()
    const stopMs = performance.now() - t0
    expect(await canConnect(httpPort)).toBe(false)
    await expect(ch.query('SELECT 1')).rejects.toThrow()
    const t1 = performance.now()
    await ch.start()
    console.log(
      `[servers.test] ClickHouse stop ${stopMs.toFixed(0)} ms, restart ${(performance.now() - t1).toFixed(0)} ms`,
    )
    expect([ch.httpPort, ch.tcpPort]).toEqual([httpPort, tcpPort])
    expect((await ch.query('SELECT sum(x) FROM default.kept')).trim()).toBe('6')
  })

  test('kill -> start recovers', async () => {
    await ch.query('CREATE TABLE default.crashy (n UInt32) ENGINE = MergeTree ORDER BY n')
    await ch.query('INSERT INTO default.crashy SELECT number FROM system.numbers LIMIT 10000')
    const t0 = performance.now()
    await ch.kill()
    expect(await canConnect(ch.httpPort)).toBe(false)
    await ch.start()
    console.log(`[servers.test] ClickHouse kill + start ${(performance.now() - t0).toFixed(0)} ms`)
    expect((await ch.query('SELECT count() FROM default.crashy')).trim()).toBe('10000')
    expect((await ch.query('SELECT sum(x) FROM default.kept')).trim()).toBe('6')
  })

  test('destroy removes the temp dir and is idempotent', async () => {
    const dir = path.dirname(ch.dataDir)
    const port = ch.httpPort
    await Promise.all([ch.destroy(), ch.destroy()])
    expect(fs.existsSync(dir)).toBe(false)
    expect(await canConnect(port)).toBe(false)
    await expect(ch.start()).rejects.toThrow(/destroyed/)
  })
})

describe('startup failures', () => {
  test('throw with the tail of the server log and leave nothing behind', async () => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const taken = (blocker.address() as net.AddressInfo).port
    const before = new Set(fs.readdirSync(os.tmpdir()).filter((f) => /^phog-(pg|ch)-/.test(f)))
    try {
      const [pgErr, chErr] = await Promise.all([
        startPostgres({ port: taken }).then(
          () => undefined,
          (e: unknown) => e,
        ),
        startClickHouse({ httpPort: taken }).then(
          () => undefined,
          (e: unknown) => e,
        ),
      ])
      expect(pgErr).toBeInstanceOf(Error)
      expect((pgErr as Error).message).toContain(`127.0.0.1:${taken} exited during startup`)
      expect((pgErr as Error).message).toMatch(/postgres\.log \(last lines\)[\s\S]*could not bind IPv4 address/)
      expect(chErr).toBeInstanceOf(Error)
      expect((chErr as Error).message).toMatch(/exited during startup[\s\S]*Address already in use/)
    } finally {
      blocker.close()
    }
    const after = fs.readdirSync(os.tmpdir()).filter((f) => /^phog-(pg|ch)-/.test(f) && !before.has(f))
    expect(after).toEqual([])
  })
})

describe('shared servers', () => {
  test('return one instance per process', async () => {
    const t0 = performance.now()
    const [pgA, pgB, chA, chB] = await Promise.all([sharedPostgres(), sharedPostgres(), sharedClickHouse(), sharedClickHouse()])
    console.log(`[servers.test] shared Postgres + ClickHouse started in parallel in ${(performance.now() - t0).toFixed(0)} ms`)
    expect(pgA).toBe(pgB)
    expect(chA).toBe(chB)
    expect(await sharedPostgres()).toBe(pgA)
    expect(await sharedClickHouse()).toBe(chA)
    const url = await pgA.createDatabase()
    const rows = await withSql(url, (sql) => sql<{ ok: number }[]>`select 1 as ok`)
    expect(rows[0]?.ok).toBe(1)
    expect((await chA.query('SELECT 1')).trim()).toBe('1')
  })

  // The servers must not outlive the test process, whether the run ends normally with a
  // failing test (bun test does not run process 'exit' listeners) or the process is SIGKILLed.
  test('servers die with the test process', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'phog-servers-test-'))
    try {
      const report = `
        import fs from 'node:fs'
        import path from 'node:path'
        import { sharedPostgres, sharedClickHouse } from ${JSON.stringify(path.join(HELPERS_DIR, 'shared-servers.ts'))}
        export async function report() {
          const [pg, ch] = await Promise.all([sharedPostgres(), sharedClickHouse()])
          const info = (dataDir: string) => {
            const dir = path.dirname(dataDir)
            return { dir, pid: Number(fs.readFileSync(path.join(dir, 'server.pid'), 'utf8')) }
          }
          console.log('SERVERS ' + JSON.stringify([info(pg.dataDir), info(ch.dataDir)]))
        }
      `
      fs.writeFileSync(path.join(work, 'report.ts'), report)
      fs.writeFileSync(
        path.join(work, 'fails.test.ts'),
        `import { test, expect } from 'bun:test'
         import { report } from './report.ts'
         test('uses the shared servers, then fails', async () => { await report(); expect(1).toBe(2) })`,
      )
      fs.writeFileSync(path.join(work, 'hangs.ts'), `import { report } from './report.ts'\nawait report()\nsetInterval(() => {}, 1000)\n`)

      const testRun = Bun.spawn([process.execPath, 'test', path.join(work, 'fails.test.ts')], {
        cwd: work,
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const script = Bun.spawn([process.execPath, path.join(work, 'hangs.ts')], { cwd: work, stdout: 'pipe', stderr: 'pipe' })

      const servers = (text: string): { dir: string; pid: number }[] => {
        const line = text.split('\n').find((l) => l.startsWith('SERVERS '))
        return line ? (JSON.parse(line.slice('SERVERS '.length)) as { dir: string; pid: number }[]) : []
      }

      // 1. A `bun test` run that ends (with a failure).
      const [testOut, testErr] = await Promise.all([new Response(testRun.stdout).text(), new Response(testRun.stderr).text()])
      expect(await testRun.exited).toBe(1)
      const fromTest = servers(testOut + testErr)
      expect(fromTest).toHaveLength(2)

      // 2. A script that is SIGKILLed while its servers run.
      const reader = script.stdout.getReader()
      let scriptOut = ''
      while (!scriptOut.includes('SERVERS ') || !scriptOut.slice(scriptOut.indexOf('SERVERS ')).includes('\n')) {
        const { value, done } = await reader.read()
        if (done) break
        scriptOut += new TextDecoder().decode(value)
      }
      const fromScript = servers(scriptOut)
      expect(fromScript).toHaveLength(2)
      for (const s of fromScript) expect(processAlive(s.pid)).toBe(true)
      script.kill('SIGKILL')
      await script.exited

      for (const s of [...fromTest, ...fromScript]) {
        expect(await eventually(() => !processAlive(s.pid), 10_000)).toBe(true)
        expect(await eventually(() => !fs.existsSync(s.dir), 10_000)).toBe(true)
      }
    } finally {
      fs.rmSync(work, { recursive: true, force: true })
    }
  }, 60_000)
})
