// The service's side of `import events`: a batch of checked events is logged as one /batch/ request would be (the
// same record, so the flush worker stores it and the learner makes persons and definitions of it), after the uuids
// the project already holds are set aside as duplicates. Never sees HTTP or the socket.
import { randomBytes } from 'node:crypto'
import { encodeRecord, type CaptureRequest } from '../capture/record'
import type { EventLog } from '../capture/service'
import { errors } from '../http/errors'
import type { ImportEvent } from './parse'

export interface ImportDeps {
  log: EventLog
  /** how many stored events hold each uuid in the project (the event store's own lookup) */
  countByUuid(projectId: number, uuids: string[]): Promise<Map<string, number>>
  /** resolves once the stores' writers have finished every record logged so far (false past the timeout) */
  stored(timeoutMs: number): Promise<boolean>
  /** the project of a project token, or null; and whether a project id exists */
  projectOfToken(token: string): Promise<number | null>
  projectExists(id: number): Promise<boolean>
  /** the id of the only project, or null when there are none or several */
  onlyProject(): Promise<number | null>
}

export interface BatchAnswer {
  stored: number
  /** uuids the project already held (stored, or logged by an earlier batch and not yet stored) */
  duplicates: number
}

/** A batch holds at most this many events: one log record, read back whole by the flush worker. */
export const MAX_BATCH_EVENTS = 2000
/** Uuids of batches logged and not yet known stored, past which a batch first waits for the stores. */
const MAX_PENDING_UUIDS = 200_000

export class ImportService {
  /** batches being checked and logged, which finish waits for */
  private readonly inFlight = new Set<Promise<void>>()
  /** logged, not yet stored: a batch re-sent after an interruption must find these too */
  private pending = new Set<string>()
  private pendingSince: Set<string>[] = []

  constructor(private readonly deps: ImportDeps) {}

  /** The project an import writes into: by id, by token, or the only one. */
  async project(choice: { project?: number; token?: string }): Promise<number> {
    if (choice.project !== undefined) {
      if (!(await this.deps.projectExists(choice.project))) throw errors.validation('invalid_project', `No project has the id ${choice.project}.`, 'project')
      return choice.project
    }
    if (choice.token !== undefined) {
      const id = await this.deps.projectOfToken(choice.token)
      if (id === null) throw errors.validation('invalid_project', 'No project has this token.', 'token')
      return id
    }
    const only = await this.deps.onlyProject()
    if (only === null) throw errors.validation('invalid_project', 'There are several projects (or none): choose one with --project ID or --token T.', 'project')
    return only
  }

  importBatch(projectId: number, events: ImportEvent[]): Promise<BatchAnswer> {
    const run = this.logBatch(projectId, events)
    const settled = run.then(
      () => undefined,
      () => undefined,
    )
    this.inFlight.add(settled)
    void settled.then(() => this.inFlight.delete(settled))
    return run
  }

  /** Wait until everything imported so far is in the stores (persons and definitions learned too). */
  async finish(timeoutMs: number): Promise<boolean> {
    await Promise.all([...this.inFlight])
    const done = await this.deps.stored(timeoutMs)
    if (done && this.inFlight.size === 0) this.forgetPending()
    return done
  }

  /**
   * Several batches may be on their way at once (the store's look-up of one beside the append of another): a batch
   * reserves its uuids in `pending` before it awaits anything, so another batch holding one of them skips it.
   */
  private async logBatch(projectId: number, events: ImportEvent[]): Promise<BatchAnswer> {
    // the stores far behind: wait for them before remembering more (what they write is forgotten here)
    if (this.pending.size > MAX_PENDING_UUIDS) await this.deps.stored(60_000)
    const fresh: ImportEvent[] = []
    const reserved = new Set<string>()
    for (const e of events) {
      const key = `${projectId}:${e.uuid}`
      if (this.pending.has(key)) continue
      this.pending.add(key)
      reserved.add(key)
      fresh.push(e)
    }
    let toLog: ImportEvent[]
    try {
      const held = fresh.length ? await this.deps.countByUuid(projectId, fresh.map((e) => e.uuid)) : new Map<string, number>()
      toLog = held.size ? fresh.filter((e) => !held.has(e.uuid)) : fresh
      if (toLog.length > 0) {
        const body = Buffer.from(JSON.stringify({ batch: toLog }), 'utf8')
        const request: CaptureRequest = {
          method: 'POST',
          body,
          contentType: 'application/json',
          contentEncoding: null,
          query: new URLSearchParams(),
          ip: null,
          userAgent: null,
          engage: false,
          receivedAt: Date.now(),
          seed: randomBytes(16),
        }
        const durable = this.deps.log.accept(encodeRecord(projectId, request, false), toLog.length, body.length, projectId)
        if (durable) await durable
      }
    } catch (error) {
      this.forget(reserved)
      throw error
    }
    if (toLog.length > 0) {
      this.pendingSince.push(reserved)
      // known stored once the writers pass this record: forgotten then (the store answers for them)
      void this.deps.stored(600_000).then((done) => {
        if (done) this.forget(reserved)
      })
    } else this.forget(reserved)
    return { stored: toLog.length, duplicates: events.length - toLog.length }
  }

  private forget(keys: Set<string>): void {
    for (const k of keys) this.pending.delete(k)
    this.pendingSince = this.pendingSince.filter((s) => s !== keys)
  }

  private forgetPending(): void {
    this.pending = new Set()
    this.pendingSince = []
  }
}
