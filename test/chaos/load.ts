// Load with the retry behaviour of real SDKs: a batch is re-sent (same uuids) until it is acknowledged.
import { insertedByUuid } from '../helpers/clickhouse-audit'
import { PROJECT_KEY } from '../helpers/stack'

export const FULL = process.env.CHAOS_FULL === '1'

export function batchBody(uuids: string[], token = PROJECT_KEY): string {
  return JSON.stringify({
    api_key: token,
    batch: uuids.map((uuid, i) => ({ event: 'chaos', uuid, properties: { distinct_id: `chaos-user-${i % 11}`, i } })),
  })
}

export interface Load {
  /** uuids of batches answered 200 */
  acked: string[]
  /** every uuid ever sent */
  sent: string[]
  statuses: Map<number, number>
  /** stop starting new batches; with retries, pending batches are still retried until acknowledged or `deadline` */
  stop(deadline?: number): Promise<void>
}

/** `pauseMs`: each sender waits this long between batches (default: none, as fast as the server answers). */
export function startLoad(url: () => string, options: { concurrency: number; batchSize: number; retry: boolean; pauseMs?: number }): Load {
  const acked: string[] = []
  const sent: string[] = []
  const statuses = new Map<number, number>()
  let running = true
  let deadline = Number.POSITIVE_INFINITY
  const count = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1)
  const loops = Array.from({ length: options.concurrency }, async () => {
    while (running) {
      const uuids = Array.from({ length: options.batchSize }, () => crypto.randomUUID())
      sent.push(...uuids)
      const body = batchBody(uuids)
      for (;;) {
        let status = 0
        try {
          const r = await fetch(`${url()}/batch/`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000) })
          status = r.status
          await r.arrayBuffer()
        } catch {
          status = 0 // connection refused or reset: not acknowledged
        }
        count(status)
        if (status === 200) {
          acked.push(...uuids)
          if (options.pauseMs) await Bun.sleep(options.pauseMs)
          break
        }
        // a refused connection (the service restarting) answers at once: without a pause the loops made millions of
        // batches in a restart's seconds, and counting their uuids afterwards took minutes
        if (!options.retry || Date.now() > deadline) {
          if (status === 0) await Bun.sleep(20)
          break
        }
        await Bun.sleep(100 + Math.random() * 100)
      }
    }
  })
  return {
    acked,
    sent,
    statuses,
    async stop(until = Date.now() + 60_000) {
      running = false
      deadline = until
      await Promise.all(loops)
    },
  }
}

export async function eventually(check: () => Promise<boolean>, ms: number, every = 100): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await Bun.sleep(every)
  }
  return check()
}

export async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)
  return m ? Number(m[1]) : 0
}

/** Every acknowledged uuid stored exactly once, and no uuid stored twice. */
export function exactlyOnce(counts: Map<string, number>, acked: string[]): { missing: number; duplicated: number } {
  let missing = 0
  for (const u of acked) if (!counts.has(u)) missing++
  let duplicated = 0
  for (const n of counts.values()) if (n > 1) duplicated++
  return { missing, duplicated }
}

/** How often ClickHouse was given each of a load's uuids (see clickhouse-audit.ts), once every acknowledged one is there (or 30 s have passed). */
export async function storedOnce(clickhouseUrl: string, load: Pick<Load, 'sent' | 'acked'>): Promise<{ missing: number; duplicated: number }> {
  await eventually(async () => (await insertedByUuid(clickhouseUrl, 1, load.acked)).size === load.acked.length, 30_000, 250)
  return exactlyOnce(await insertedByUuid(clickhouseUrl, 1, load.sent), load.acked)
}
