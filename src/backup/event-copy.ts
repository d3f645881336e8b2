// A consistent copy of the embedded event store, taken while it is written: SQLite by `VACUUM INTO` on a thread of
// its own, DuckDB by its owner thread (`COPY FROM DATABASE` into an attached new file: one transaction, one state).
import { accessDuckDb } from '../events/duckdb-access'
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { basename, join } from 'node:path'
import { duckDbBackupDir, type DuckDbSettings } from '../events/duckdb-database'
import type { SqliteCopyAnswer, SqliteCopyRequest } from './sqlite-copy-thread'

export interface EventCopy {
  migrations: string[]
  eventsByProject: Record<string, number>
  /** sessions per project (the recordings' store's copy) */
  recordingsByProject?: Record<string, number>
}

const SQLITE_COPY_THREAD = new URL('./sqlite-copy-thread.ts', import.meta.url)

/** Copy a SQLite file into `to` (which must not exist) off this thread, counting the copy's events or recordings. */
export function copySqlite(from: string, to: string, countEvents: boolean, countRecordings = false): Promise<EventCopy> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(SQLITE_COPY_THREAD.href)
    worker.onmessage = (event: MessageEvent<SqliteCopyAnswer>) => {
      worker.terminate()
      const answer = event.data
      if (answer.ok) resolve({ migrations: answer.migrations, eventsByProject: answer.eventsByProject, recordingsByProject: answer.recordingsByProject })
      else reject(Object.assign(new Error(answer.message), { code: answer.code }))
    }
    worker.onerror = (event: ErrorEvent) => {
      worker.terminate()
      reject(new Error(`the SQLite copy thread failed: ${event.message}`))
    }
    worker.postMessage({ from, to, countEvents, countRecordings } satisfies SqliteCopyRequest)
  })
}

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`

/** Copy the DuckDB event store (`file`, served by this process's owner thread, started if need be) into `to`. */
export async function copyDuckDb(file: string, settings: DuckDbSettings, to: string): Promise<EventCopy> {
  // DuckDB reaches no file but its own and those under its backup directory (duckdb-database.ts): the copy is made
  // there, then moved into the backup
  const staging = duckDbBackupDir(file)
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true, mode: 0o700 })
  const staged = join(staging, basename(to))
  try {
    const copy = await copyDuckDbInto(file, settings, staged)
    // detached, the copy is checkpointed into its file; a log DuckDB left beside it travels with it
    for (const [from, into] of [[staged, to], [`${staged}.wal`, `${to}.wal`]]) {
      if (!existsSync(from)) continue
      try {
        renameSync(from, into)
      } catch (error) {
        if ((error as { code?: string }).code !== 'EXDEV') throw error
        copyFileSync(from, into)
      }
    }
    return copy
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

async function copyDuckDbInto(file: string, settings: DuckDbSettings, to: string): Promise<EventCopy> {
  const duck = await accessDuckDb(file, settings)
  try {
    const [[name]] = (await duck.all('SELECT current_database()')) as [[string]]
    await duck.all(`ATTACH ${quoted(to)} AS phog_backup`)
    try {
      await duck.all(`COPY FROM DATABASE "${name.replaceAll('"', '""')}" TO phog_backup`)
      const migrations = (await duck.all('SELECT version FROM phog_backup.schema_migrations ORDER BY version')).map((r) => String(r[0]))
      const eventsByProject: Record<string, number> = {}
      for (const [team, n] of await duck.all('SELECT team_id, count(*) FROM phog_backup.events GROUP BY team_id')) eventsByProject[String(team)] = Number(n)
      return { migrations, eventsByProject }
    } finally {
      await duck.all('DETACH phog_backup')
    }
  } finally {
    await duck.release()
  }
}
