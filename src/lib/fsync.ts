// Durability on disk: a file's or a directory's entries forced out (a directory's fsync makes the names in it last).
import { closeSync, fsyncSync, openSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

export function syncPath(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** fsync every file and directory below `dir` (a new database cluster, a backup, a restored data directory). */
export function syncTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) syncTree(path)
    else if (entry.isFile()) syncPath(path)
  }
  syncPath(dir)
}
