// The file work of a backup: checksums, copies of a byte range, the manifest, syncing what was written.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { syncPath } from '../lib/fsync'
import type { BackupFile } from './model'

const CHUNK = 1 << 20

/** sha256 of a file, read a megabyte at a time (the event loop turns between chunks). */
export async function sha256File(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256')
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.allocUnsafe(CHUNK)
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null)
      if (bytesRead === 0) break
      hasher.update(buffer.subarray(0, bytesRead))
    }
  } finally {
    await handle.close()
  }
  return hasher.digest('hex')
}

/** Copy the first `bytes` of `from` into a new file `to` (a log segment's valid records, not what follows them). */
export async function copyPrefix(from: string, to: string, bytes: number): Promise<void> {
  const source = await open(from, 'r')
  const target = await open(to, 'wx', 0o600)
  try {
    const buffer = Buffer.allocUnsafe(CHUNK)
    let done = 0
    while (done < bytes) {
      const { bytesRead } = await source.read(buffer, 0, Math.min(CHUNK, bytes - done), done)
      if (bytesRead === 0) throw new Error(`${from} ended at ${done} bytes, before the ${bytes} expected`)
      await target.write(buffer, 0, bytesRead, done)
      done += bytesRead
    }
    await target.sync()
  } finally {
    await source.close()
    await target.close()
  }
}

/** Every regular file below `dir`, as paths relative to it, sorted. */
export function filesBelow(dir: string, under = dir): string[] {
  const found: string[] = []
  for (const entry of readdirSync(under, { withFileTypes: true })) {
    const path = join(under, entry.name)
    if (entry.isDirectory()) found.push(...filesBelow(dir, path))
    else if (entry.isFile()) found.push(relative(dir, path))
  }
  return found.sort()
}

/** Size and checksum of every file below `dir` but the manifest. */
export async function describeFiles(dir: string): Promise<BackupFile[]> {
  const files: BackupFile[] = []
  for (const path of filesBelow(dir)) {
    if (path === MANIFEST) continue
    files.push({ path, bytes: lstatSync(join(dir, path)).size, sha256: await sha256File(join(dir, path)) })
  }
  return files
}

export const MANIFEST = 'manifest.json'

export function writeJsonDurably(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 })
  syncPath(path)
}

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'))
}

/** Whether `dir` is absent or an empty directory (the only places a backup or a restore writes into). */
export function isEmptyOrAbsent(dir: string): boolean {
  if (!existsSync(dir)) return true
  return lstatSync(dir).isDirectory() && readdirSync(dir).length === 0
}

export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
}
