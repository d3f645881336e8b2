// Tells every process that a project token was reset or a personal key revoked or rolled, so that caches drop the
// old credential: one version row bumped by each change, compared every KEY_CHANGE_CHECK_MS, and a NOTIFY on real
// Postgres so that other processes usually hear of it within milliseconds.
import type { Sql } from 'postgres'

const CHANNEL = 'key_changes'

/** Call inside the transaction that changed a key (or right after it). */
export async function announceKeyChange(sql: Sql): Promise<void> {
  await sql`update key_changes set version = version + 1 where id = 1`
  await sql`select pg_notify(${CHANNEL}, '')`
}

export class KeyChangeWatcher {
  private version: number | null = null
  private timer: ReturnType<typeof setInterval> | undefined
  private unlisten: (() => Promise<void>) | null = null
  private checking = false

  constructor(
    private readonly sql: Sql,
    private readonly onChange: () => void,
    private readonly options: { checkEveryMs: number; listen: boolean },
  ) {}

  async start(): Promise<void> {
    await this.check()
    this.timer = setInterval(() => void this.check(), this.options.checkEveryMs)
    this.timer.unref?.()
    if (this.options.listen) {
      try {
        const subscription = await this.sql.listen(CHANNEL, () => void this.check())
        this.unlisten = () => subscription.unlisten()
      } catch {
        // the periodic check still runs
      }
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    const unlisten = this.unlisten
    this.unlisten = null
    await unlisten?.().catch(() => undefined)
  }

  async check(): Promise<void> {
    if (this.checking) return
    this.checking = true
    try {
      const [row] = await this.sql<{ version: number }[]>`select version from key_changes where id = 1`
      const seen = Number(row?.version ?? 0)
      if (this.version !== null && seen !== this.version) this.onChange()
      this.version = seen
    } catch {
      // Postgres unreachable: the caches keep what they know, and the next check compares again
    } finally {
      this.checking = false
    }
  }
}
