// `verify --from DIR`: the manifest is whole and known, every file is there with its size and checksum, and the
// copies open (the event store counted against the manifest; the metadata loaded into a throwaway directory).
import { Database } from 'bun:sqlite'
import { existsSync, lstatSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import { openDatabase } from '../db/postgres'
import { filesBelow, MANIFEST, readJson, sha256File } from './files'
import { BACKUP_FORMAT, Manifest } from './model'
import { appliedMigrations, countMetadata } from './repository'
import { EVENT_FILES, METADATA_FILE, RECORDINGS_FILE } from './service'

export interface VerifyReport {
  ok: boolean
  from: string
  /** what makes the backup unusable */
  problems: string[]
  /** what is worth knowing but restores fine */
  notes: string[]
  manifest?: Pick<Manifest, 'phog_version' | 'created_at' | 'stores' | 'counts' | 'log'>
  files_checked: number
}

export async function verifyBackup(from: string, options: { openCopies?: boolean } = {}): Promise<VerifyReport> {
  const report: VerifyReport = { ok: false, from, problems: [], notes: [], files_checked: 0 }
  const manifestPath = join(from, MANIFEST)
  if (!existsSync(manifestPath)) {
    report.problems.push(`${MANIFEST} is missing: ${from} is not a finished backup`)
    return report
  }
  let manifest: Manifest
  try {
    const read = readJson(manifestPath)
    if (!Value.Check(Manifest, read)) {
      const first = [...Value.Errors(Manifest, read)][0]
      report.problems.push(`${MANIFEST} is not a backup manifest (${first ? `${first.path || '/'}: ${first.message}` : 'unknown shape'})`)
      return report
    }
    manifest = read
  } catch (error) {
    report.problems.push(`${MANIFEST} does not parse: ${(error as Error).message}`)
    return report
  }
  report.manifest = { phog_version: manifest.phog_version, created_at: manifest.created_at, stores: manifest.stores, counts: manifest.counts, log: manifest.log }
  if (manifest.format > BACKUP_FORMAT) report.problems.push(`written in format ${manifest.format} by phog ${manifest.phog_version}; this version reads format ${BACKUP_FORMAT} at most`)

  const listed = new Set<string>()
  for (const file of manifest.files) {
    listed.add(file.path)
    const path = join(from, file.path)
    if (file.path.split('/').includes('..') || file.path.startsWith('/')) {
      report.problems.push(`${file.path}: not a path inside the backup`)
      continue
    }
    if (!existsSync(path)) {
      report.problems.push(`${file.path}: missing`)
      continue
    }
    const bytes = lstatSync(path).size
    if (bytes !== file.bytes) report.problems.push(`${file.path}: ${bytes} bytes, the manifest says ${file.bytes}`)
    else if ((await sha256File(path)) !== file.sha256) report.problems.push(`${file.path}: checksum differs from the manifest's (the file changed or is damaged)`)
    report.files_checked++
  }
  for (const extra of filesBelow(from)) if (extra !== MANIFEST && !listed.has(extra)) report.notes.push(`${extra}: not in the manifest (ignored by restore)`)
  for (const needed of [METADATA_FILE, EVENT_FILES[manifest.stores.events]]) if (!listed.has(needed)) report.problems.push(`${needed}: not in the manifest`)
  // the manifest counts recordings when their store was copied: one without the other is a torn backup
  if (manifest.counts.recordings !== undefined && !listed.has(RECORDINGS_FILE)) report.problems.push(`${RECORDINGS_FILE}: not in the manifest`)

  if (report.problems.length === 0 && options.openCopies !== false) await openCopies(from, manifest, report)
  report.ok = report.problems.length === 0
  return report
}

/** Open each copy as its store would and compare what it holds with the manifest. */
async function openCopies(from: string, manifest: Manifest, report: VerifyReport): Promise<void> {
  try {
    const events = await countEvents(join(from, EVENT_FILES[manifest.stores.events]), manifest.stores.events)
    if (events !== manifest.counts.events) report.problems.push(`the event store copy holds ${events} events, the manifest says ${manifest.counts.events}`)
  } catch (error) {
    report.problems.push(`the event store copy does not open: ${(error as Error).message}`)
  }
  if (manifest.files.some((f) => f.path === RECORDINGS_FILE)) {
    try {
      const sessions = countRecordings(join(from, RECORDINGS_FILE))
      if (sessions !== (manifest.counts.recordings ?? 0)) report.problems.push(`the recordings copy holds ${sessions} sessions, the manifest says ${manifest.counts.recordings ?? 0}`)
    } catch (error) {
      report.problems.push(`the recordings copy does not open: ${(error as Error).message}`)
    }
  }
  const scratch = join(tmpdir(), `phog-verify-${process.pid}-${Date.now()}`)
  try {
    await unpackMetadata(join(from, METADATA_FILE), join(scratch, 'pg'))
    const db = await openDatabase({ dataDir: scratch, poolMax: 1, embeddedFsync: false })
    try {
      const migrations = await appliedMigrations(db.sql)
      if (migrations.join() !== manifest.schema.postgres.join()) report.problems.push('the metadata copy’s migrations differ from the manifest’s')
      const { counts } = await countMetadata(db.sql)
      for (const [name, n] of Object.entries(counts)) {
        // counted just before the copy was taken: a write in between shows here, it is not damage
        if (manifest.counts[name] !== n) report.notes.push(`${name}: the metadata copy holds ${n}, the manifest counted ${manifest.counts[name]} just before the copy`)
      }
    } finally {
      await db.close()
    }
  } catch (error) {
    report.problems.push(`the metadata copy does not open: ${(error as Error).message}`)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** Unpack a metadata tar (PGlite's dumpDataDir) into `pgDir`, a database directory the embedded store opens. */
export async function unpackMetadata(tar: string, pgDir: string): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite')
  mkdirSync(pgDir, { recursive: true, mode: 0o700 })
  const db = await PGlite.create(pgDir, { loadDataDir: Bun.file(tar) })
  await db.close()
}

function countRecordings(file: string): number {
  const db = new Database(file, { readonly: true })
  try {
    const [check] = db.query('PRAGMA quick_check').all() as { quick_check: string }[]
    if (check?.quick_check !== 'ok') throw new Error(`quick_check: ${check?.quick_check}`)
    return (db.query('SELECT count(*) AS n FROM recording_sessions').get() as { n: number }).n
  } finally {
    db.close()
  }
}

async function countEvents(file: string, kind: 'sqlite' | 'duckdb'): Promise<number> {
  if (kind === 'sqlite') {
    const db = new Database(file, { readonly: true })
    try {
      const [check] = db.query('PRAGMA quick_check').all() as { quick_check: string }[]
      if (check?.quick_check !== 'ok') throw new Error(`quick_check: ${check?.quick_check}`)
      return (db.query('SELECT count(*) AS n FROM events').get() as { n: number }).n
    } finally {
      db.close()
    }
  }
  const { DuckDBInstance } = await import('@duckdb/node-api')
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' })
  try {
    const c = await instance.connect()
    try {
      return Number((await c.runAndReadAll('SELECT count(*) FROM events')).getRows()[0][0])
    } finally {
      c.closeSync()
    }
  } finally {
    instance.closeSync()
  }
}
