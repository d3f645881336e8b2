// SIGKILL during a burst of concurrent capture requests, whose records the log's group-commit writer writes many at
// a time: every acknowledged event is stored once, and each consumer of the log sees each client's requests in the
// order the client sent them (a request sent after another was acknowledged comes after it in the log). Checked for
// the event-store writer (the order rows were inserted in) and for the learner (the person property the last request
// of each client set is the one kept). On the embedded stores, with fdatasync per group and on an interval.
import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { eventually, metric } from './load'

const CLIENTS = 32
const EVENTS_PER_REQUEST = 2

interface Client {
  /** uuids of each acknowledged request, in the order sent */
  acked: string[][]
  /** the last request number sent */
  last: number
  /** the last acknowledged request number */
  lastAcked: number
}

describe('SIGKILL during a burst written by the group-commit writer', () => {
  for (const fsync of ['0', '50']) {
    test(`nothing acknowledged is lost, and each consumer keeps each client's order (WAL_FSYNC_INTERVAL_MS=${fsync})`, async () => {
      const env: Record<string, string> = { ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), FLUSH_INTERVAL_MS: '20', LOG_LEVEL: 'info', WAL_FSYNC_INTERVAL_MS: fsync, EMBEDDED_EVENT_STORE: 'sqlite' }
      let service: ServiceProcess = await spawnService(env)
      const port = service.port
      const clients: Client[] = Array.from({ length: CLIENTS }, () => ({ acked: [], last: 0, lastAcked: 0 }))
      let running = true
      let groupsBeforeKill = { groups: 0, records: 0 }
      const loops = clients.map(async (client, c) => {
        while (running) {
          const n = ++client.last
          const uuids = Array.from({ length: EVENTS_PER_REQUEST }, () => crypto.randomUUID())
          const body = JSON.stringify({
            api_key: PROJECT_KEY,
            batch: uuids.map((uuid, i) => ({ event: 'burst', uuid, distinct_id: `gc-client-${c}`, properties: { client: c, n, i, $set: { last: n } } })),
          })
          try {
            const r = await fetch(`${service.url}/batch/`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000) })
            await r.arrayBuffer()
            if (r.status === 200) {
              client.acked.push(uuids)
              client.lastAcked = n
            }
          } catch {
            await Bun.sleep(20) // killed, or restarting: never acknowledged
          }
        }
      })
      await Bun.sleep(2000)
      groupsBeforeKill = { groups: await metric(service.url, 'pipeline_wal_group_writes_total'), records: await metric(service.url, 'pipeline_wal_group_records_total') }
      await Bun.sleep(200 + Math.random() * 300)
      await service.kill()
      await Bun.sleep(100)
      service = await spawnService(env, { port })
      await Bun.sleep(1000)
      running = false
      await Promise.all(loops)
      const acked = clients.flatMap((client) => client.acked.flat())
      console.log(
        `[group commit, fsync ${fsync}] ${acked.length / EVENTS_PER_REQUEST} requests acknowledged; before the kill ${groupsBeforeKill.records} records in ${groupsBeforeKill.groups} groups (${(groupsBeforeKill.records / Math.max(1, groupsBeforeKill.groups)).toFixed(1)} a group)`,
      )
      expect(acked.length).toBeGreaterThan(500)
      // the burst was written in groups: more requests than writes
      expect(groupsBeforeKill.records).toBeGreaterThan(groupsBeforeKill.groups)

      try {
        // the learner: each client's person holds what its last request set (its requests were learned in order)
        const persons = async () => {
          const answers = await Promise.all(
            clients.map(async (_, c) => {
              const r = await fetch(`${service.url}/api/projects/1/persons/?distinct_id=gc-client-${c}`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })
              return ((await r.json()) as { results: { properties: { last?: number } }[] }).results[0]?.properties.last
            }),
          )
          return answers
        }
        const learned = await eventually(async () => (await persons()).every((last, c) => last === clients[c].last), 60_000, 250)
        if (!learned) console.error(`persons: ${JSON.stringify(await persons())}\nexpected: ${JSON.stringify(clients.map((client) => client.last))}\n${service.logs().slice(-4000)}`)
        // after the restart every client's last request was acknowledged (nothing killed it)
        expect(clients.every((client) => client.lastAcked === client.last)).toBe(true)
        expect(await persons()).toEqual(clients.map((client) => client.last))

        // the event store: every acknowledged event once, each client's requests inserted in the order sent
        const positions = async () => {
          const db = new Database(join(env.DATA_DIR, 'events.sqlite'), { readonly: true })
          try {
            const rows = db.query('SELECT uuid, rowid AS at FROM events WHERE team_id = 1').all() as { uuid: string; at: number }[]
            return new Map(rows.map((r) => [r.uuid, r.at]))
          } finally {
            db.close()
          }
        }
        const landed = await eventually(async () => {
          const stored = await positions()
          return acked.every((uuid) => stored.has(uuid))
        }, 60_000, 250)
        if (!landed) console.error(service.logs().slice(-4000))
        const stored = await positions()
        expect(acked.filter((uuid) => !stored.has(uuid))).toEqual([])
        const outOfOrder: string[] = []
        clients.forEach((client, c) => {
          const at = client.acked.map((uuids) => stored.get(uuids[0])!)
          for (let k = 1; k < at.length; k++) if (!(at[k] > at[k - 1])) outOfOrder.push(`client ${c}: request ${k} inserted at ${at[k]}, before ${at[k - 1]}`)
        })
        expect(outOfOrder).toEqual([])
        // (uuids are unique in the store: a record replayed after the kill is not inserted twice)
      } finally {
        await service.stop()
      }
    }, 240_000)
  }
})
