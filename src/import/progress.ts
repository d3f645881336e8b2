// Where an interrupted import resumes: a small file per input in DATA_DIR/import, rewritten (atomically, by rename)
// after every batch the service acknowledged. It counts the records consumed up to the end of that batch, so a
// restart skips exactly what is in the log already; what was sent after it is sent again, and found a duplicate
// by its uuid. A line is never skipped without having been acknowledged, nor acknowledged twice.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { RefusalReason } from './parse'

export interface FileCounts {
  read: number
  stored: number
  duplicates: number
  refused: Partial<Record<RefusalReason, number>>
}

export interface Progress {
  file: string
  size: number
  mtime_ms: number
  project: number
  /** records consumed (read, and stored, skipped or refused) up to the last acknowledged batch */
  records_done: number
  counts: FileCounts
}

export const emptyCounts = (): FileCounts => ({ read: 0, stored: 0, duplicates: 0, refused: {} })

export function progressPath(dataDir: string, file: string): string {
  const tag = createHash('sha256').update(resolve(file)).digest('hex').slice(0, 16)
  return join(resolve(dataDir), 'import', `${tag}.json`)
}

/** The saved progress of this very file into this project (same size and modification time), else null. */
export function savedProgress(dataDir: string, file: string, project: number): Progress | null {
  let saved: Progress
  try {
    saved = JSON.parse(readFileSync(progressPath(dataDir, file), 'utf8')) as Progress
  } catch {
    return null
  }
  const stat = statSync(file)
  const same = saved.file === resolve(file) && saved.size === stat.size && saved.mtime_ms === Math.floor(stat.mtimeMs) && saved.project === project
  return same && Number.isInteger(saved.records_done) ? saved : null
}

export function saveProgress(dataDir: string, progress: Progress): void {
  const path = progressPath(dataDir, progress.file)
  mkdirSync(join(resolve(dataDir), 'import'), { recursive: true, mode: 0o700 })
  writeFileSync(`${path}.tmp`, JSON.stringify(progress), { mode: 0o600 })
  renameSync(`${path}.tmp`, path)
}

export function clearProgress(dataDir: string, file: string): void {
  rmSync(progressPath(dataDir, file), { force: true })
}

export function fileIdentity(file: string): { file: string; size: number; mtime_ms: number } {
  const stat = statSync(file)
  return { file: resolve(file), size: stat.size, mtime_ms: Math.floor(stat.mtimeMs) }
}
