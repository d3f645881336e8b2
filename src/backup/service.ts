// Taking a backup of the embedded stores while the service runs (or, with no service, by the CLI itself). What is
// copied in which order, and why the copy is consistent, is docs/operations.md#backups; in short:
//   1. the log's segments are held (none is recycled until the end) and its checkpoint read: C;
//   2. the event store is copied (it holds at least every record C says the store writer finished);
//   3. the metadata store is copied (at least every record C says the learner finished);
//   4. the recordings' store is copied (at least every record C says the recordings writer finished);
//   5. the log's segments are copied, with C as their checkpoint, every record after it marked *in doubt*.
// After a restore the flush worker replays the copied log from C: an event the store copy already holds is found by
// its uuid and skipped, one it lacks is written; a recording block the copy already holds is found by its id (its
// record's sequence number and position) and skipped. Nothing acknowledged before step 1 is missing, nothing is
// doubled.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import type { Sql } from 'postgres'
import { ApiError, errors } from '../http/errors'
import { Checkpoint, type CheckpointState } from '../pipeline/checkpoint'
import type { Segment } from '../pipeline/wal-reader'
import { copySqlite, type EventCopy } from './event-copy'
import { syncTree } from '../lib/fsync'
import { copyPrefix, describeFiles, isEmptyOrAbsent, MANIFEST, makePrivateDir, writeJsonDurably } from './files'
import { BACKUP_FORMAT, type Manifest } from './model'
import { appliedMigrations, countMetadata } from './repository'

export type EmbeddedEventStore = 'sqlite' | 'duckdb'

/** What a backup reads; the running service and the CLI (no service running) each provide it. */
export interface BackupSources {
  dataDir: string
  eventStore: EmbeddedEventStore
  sql: Sql
  /** a tar of the metadata store's directory, consistent (pglite-queue.ts `exclusive`) */
  dumpMetadata(file: string): Promise<number>
  /** a consistent copy of the event store into a new file */
  copyEvents(file: string): Promise<EventCopy>
  /** keep every segment of the log until the answer is called */
  holdLog(): () => void
  /** the log's segments now, with their valid sizes */
  logSegments(): Segment[]
}

export const PHOG_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

export const EVENT_FILES: Readonly<Record<EmbeddedEventStore, string>> = { sqlite: 'events.sqlite', duckdb: 'events.duckdb' }
export const METADATA_FILE = 'metadata.tar'
export const RECORDINGS_FILE = 'recordings.sqlite'

const backupRunning = () => new ApiError(409, 'invalid_request', 'backup_running', 'A backup is already running. Wait for it to finish, then try again.')

/** One backup at a time per process (409 for the second). */
export class BackupService {
  private running = false

  constructor(private readonly sources: BackupSources) {}

  get busy(): boolean {
    return this.running
  }

  async run(to: string): Promise<{ path: string; manifest: Manifest }> {
    if (this.running) throw backupRunning()
    this.running = true
    try {
      const path = resolve(to)
      return { path, manifest: await takeBackup(this.sources, path) }
    } finally {
      this.running = false
    }
  }
}

/** The checkpoint the copy starts from: C, with every copied record in doubt for every consumer. */
export function restoredCheckpoint(state: CheckpointState, lastCopiedSeq: number): CheckpointState {
  const attempting: Record<string, number> = { ...state.attempting }
  for (const consumer of new Set(['store', ...Object.keys(state.done), ...Object.keys(state.attempting)])) {
    attempting[consumer] = Math.max(attempting[consumer] ?? 0, lastCopiedSeq)
  }
  return { done: { ...state.done }, attempting }
}

async function takeBackup(sources: BackupSources, to: string): Promise<Manifest> {
  const dataDir = resolve(sources.dataDir)
  if (to === dataDir || to.startsWith(`${dataDir}/wal`) || to.startsWith(`${dataDir}/pg`)) {
    throw errors.validation('invalid_input', 'A backup cannot be written into the directory it copies (use DATA_DIR/backups/… or another disk).', 'to')
  }
  if (!isEmptyOrAbsent(to)) throw errors.validation('invalid_input', `${to} is not empty: a backup is written into a new or empty directory.`, 'to')
  const created = !existsSync(to)
  makePrivateDir(to)
  const createdAt = new Date()
  try {
    const release = sources.holdLog()
    let copy: EventCopy
    let log: Manifest['log']
    let metadata: Awaited<ReturnType<typeof countMetadata>>
    let postgresMigrations: string[]
    let recordingsByProject: Record<string, number> | null = null
    try {
      const checkpoint = Checkpoint.read(join(dataDir, 'wal', 'checkpoint'))
      copy = await sources.copyEvents(join(to, EVENT_FILES[sources.eventStore]))
      metadata = await countMetadata(sources.sql)
      postgresMigrations = await appliedMigrations(sources.sql)
      await sources.dumpMetadata(join(to, METADATA_FILE))
      // absent until the first recording is stored
      const recordings = join(dataDir, RECORDINGS_FILE)
      if (existsSync(recordings)) recordingsByProject = (await copySqlite(recordings, join(to, RECORDINGS_FILE), false, true)).recordingsByProject ?? {}
      log = await copyLog(sources.logSegments(), checkpoint, join(to, 'wal'), join(dataDir, 'wal', 'backlog'))
    } finally {
      release()
    }
    copyDirectory(join(dataDir, 'dlq'), join(to, 'dlq'))

    const counts: Record<string, number> = { events: 0, ...metadata.counts }
    const byProject = metadata.byProject
    for (const [team, n] of Object.entries(copy.eventsByProject)) {
      counts.events += n
      ;(byProject[team] ??= {}).events = n
    }
    if (recordingsByProject) {
      counts.recordings = 0
      for (const [team, n] of Object.entries(recordingsByProject)) {
        counts.recordings += n
        ;(byProject[team] ??= {}).recordings = n
      }
    }
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      phog_version: PHOG_VERSION,
      created_at: createdAt.toISOString(),
      finished_at: new Date().toISOString(),
      stores: { metadata: 'pglite', events: sources.eventStore },
      schema: { postgres: postgresMigrations, events: copy.migrations },
      counts,
      counts_by_project: byProject,
      log,
      files: await describeFiles(to),
    }
    writeJsonDurably(join(to, MANIFEST), manifest)
    syncTree(to)
    return manifest
  } catch (error) {
    // nothing half-written stays: the directory as it was (gone, or empty)
    if (created) rmSync(to, { recursive: true, force: true })
    else for (const entry of readdirSync(to)) rmSync(join(to, entry), { recursive: true, force: true })
    const code = (error as { code?: string })?.code
    if (code === 'ENOSPC' || code === 'SQLITE_FULL' || /No space left|database or disk is full|disk is full/i.test(String((error as Error)?.message))) {
      throw new ApiError(507, 'server_error', 'insufficient_storage', `The backup's disk is full (${to}): the partial copy was removed. Free space or choose another directory.`)
    }
    throw error
  }
}

/** The log's segments (valid bytes only), its saved backlog tally, and the checkpoint the restore starts from. */
async function copyLog(segments: Segment[], checkpoint: CheckpointState, to: string, backlog: string): Promise<Manifest['log']> {
  mkdirSync(to, { mode: 0o700 })
  let lastSeq = 0
  for (const segment of segments) {
    await copyPrefix(segment.path, join(to, basename(segment.path)), segment.size)
    if (segment.size > 0) lastSeq = Math.max(lastSeq, segment.lastSeq)
  }
  const firstSeq = segments[0]?.firstSeq ?? lastSeq + 1
  const copied = new Checkpoint(join(to, 'checkpoint'))
  copied.update((state) => Object.assign(state, restoredCheckpoint(checkpoint, lastSeq)))
  copied.close()
  if (existsSync(backlog)) copyFileSync(backlog, join(to, 'backlog'))
  const finished = Math.min(...Object.values(checkpoint.done), Number.POSITIVE_INFINITY)
  const from = Math.max(firstSeq, Number.isFinite(finished) ? finished + 1 : firstSeq)
  return { records: Math.max(0, lastSeq - from + 1), first_seq: firstSeq, last_seq: lastSeq }
}

function copyDirectory(from: string, to: string): void {
  if (!existsSync(from)) return
  makePrivateDir(to)
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.isFile()) copyFileSync(join(from, entry.name), join(to, entry.name))
  }
}
