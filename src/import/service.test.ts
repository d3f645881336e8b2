import { describe, expect, test } from 'bun:test'
import { decodeRecord } from '../capture/record'
import { errors } from '../http/errors'
import type { ImportEvent } from './parse'
import { ImportService, type ImportDeps } from './service'

const event = (n: number): ImportEvent => ({
  uuid: `0193c000-0000-7000-8000-${String(n).padStart(12, '0')}`,
  event: 'e',
  distinct_id: 'd',
  timestamp: '2023-01-01T00:00:00.000Z',
  properties: {},
})

/** A log whose records are kept, a store holding `held` uuids, and stores that finish only when told. */
function harness(held: string[] = []) {
  const records: { projectId: number; batch: ImportEvent[] }[] = []
  let storedNow = false
  let refuse = false
  const deps: ImportDeps = {
    log: {
      accept(parts) {
        if (refuse) {
          refuse = false
          throw errors.unavailable('capture_backlog_full', 'full')
        }
        const { projectId, request } = decodeRecord(Buffer.concat(parts))
        records.push({ projectId, batch: (JSON.parse(Buffer.from(request.body).toString('utf8')) as { batch: ImportEvent[] }).batch })
        return null
      },
    },
    countByUuid: async (_project, uuids) => new Map(uuids.filter((u) => held.includes(u)).map((u) => [u, 1])),
    stored: async () => storedNow,
    projectOfToken: async (token) => (token === 'phc_known' ? 7 : null),
    projectExists: async (id) => id === 7,
    onlyProject: async () => 7,
  }
  return { service: new ImportService(deps), records, store: () => (storedNow = true), refuseNext: () => (refuse = true) }
}

describe('ImportService', () => {
  test('logs a batch as one /batch/ record, without the uuids the project holds or repeats within it', async () => {
    const { service, records } = harness([event(2).uuid])
    const answer = await service.importBatch(7, [event(1), event(2), event(3), event(1)])
    expect(answer).toEqual({ stored: 2, duplicates: 2 })
    expect(records).toHaveLength(1)
    expect(records[0]!.projectId).toBe(7)
    expect(records[0]!.batch.map((e) => e.uuid)).toEqual([event(1).uuid, event(3).uuid])
  })

  test('a batch sent again before the stores have it (an import resumed) is found a duplicate of what is in the log', async () => {
    const { service, records } = harness()
    expect(await service.importBatch(7, [event(1), event(2)])).toEqual({ stored: 2, duplicates: 0 })
    expect(await service.importBatch(7, [event(2), event(3)])).toEqual({ stored: 1, duplicates: 1 })
    expect(records.flatMap((r) => r.batch.map((e) => e.uuid))).toEqual([event(1).uuid, event(2).uuid, event(3).uuid])
  })

  test('two batches on their way at once never both log a uuid they share', async () => {
    const { service, records } = harness()
    const [a, b] = await Promise.all([service.importBatch(7, [event(1), event(2)]), service.importBatch(7, [event(2), event(3)])])
    expect(a.stored + b.stored).toBe(3)
    expect(a.duplicates + b.duplicates).toBe(1)
    expect(records.flatMap((r) => r.batch.map((e) => e.uuid)).sort()).toEqual([event(1).uuid, event(2).uuid, event(3).uuid])
  })

  test('a batch the log refuses (full) releases its uuids: sent again, it is logged', async () => {
    const { service, records, refuseNext } = harness()
    refuseNext()
    await expect(service.importBatch(7, [event(1)])).rejects.toMatchObject({ status: 503 })
    expect(await service.importBatch(7, [event(1)])).toEqual({ stored: 1, duplicates: 0 })
    expect(records).toHaveLength(1)
  })

  test('a batch with nothing new logs nothing', async () => {
    const { service, records } = harness([event(1).uuid])
    expect(await service.importBatch(7, [event(1)])).toEqual({ stored: 0, duplicates: 1 })
    expect(records).toHaveLength(0)
  })

  test('the project: by id, by token, or the only one; an unknown one is a 400', async () => {
    const { service } = harness()
    expect(await service.project({ project: 7 })).toBe(7)
    expect(await service.project({ token: 'phc_known' })).toBe(7)
    expect(await service.project({})).toBe(7)
    await expect(service.project({ project: 8 })).rejects.toMatchObject({ status: 400 })
    await expect(service.project({ token: 'phc_unknown' })).rejects.toMatchObject({ status: 400 })
  })

  test('finish reports whether the stores have everything', async () => {
    const { service, store } = harness()
    await service.importBatch(7, [event(1)])
    expect(await service.finish(10)).toBe(false)
    store()
    expect(await service.finish(10)).toBe(true)
  })
})
