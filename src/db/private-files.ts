// DATA_DIR holds the write-ahead log (captured events), the embedded database (keys' hashes, persons) and the
// event store: only the service's own user may read it, as Postgres insists for its own data directory. The
// process creates everything with umask 077 (directories 0700, files 0600), and at boot it tightens what an older
// version, or another tool, left open, saying so in the log.
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** Files and directories fixed in one boot are counted; the walk stops after this many entries (a huge directory). */
const MAX_ENTRIES = 200_000

export interface PermissionFix {
  /** entries whose mode was tightened */
  fixed: number
  /** a few of their paths, for the warning */
  examples: string[]
  /** why nothing was tightened (DATA_DIR looks like a shared directory), if so */
  skipped?: string
}

/** Create `dir` 0700 if needed, make new files private from now on, and tighten what exists under it. */
export function securePrivateDir(dir: string): PermissionFix {
  process.umask(0o077)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const out: PermissionFix = { fixed: 0, examples: [] }
  // DATA_DIR=/tmp or / by mistake: never chmod a shared directory or what other users put in it
  const root = lstatSync(dir)
  const uid = process.getuid?.() ?? root.uid
  if (resolve(dir) === '/' || (root.mode & 0o1000) !== 0 || root.uid !== uid) {
    out.skipped = `${dir} is shared (sticky, the root, or owned by another user): give the service a directory of its own`
    return out
  }
  const stack = [dir]
  let seen = 0
  while (stack.length > 0 && seen < MAX_ENTRIES) {
    const path = stack.pop()!
    seen++
    let stat
    try {
      stat = lstatSync(path)
    } catch {
      continue // removed meanwhile
    }
    // a link is never followed: what it points at is not ours to change
    if (stat.isSymbolicLink() || stat.uid !== uid) continue
    const isDir = stat.isDirectory()
    if ((stat.mode & 0o077) !== 0) {
      try {
        chmodSync(path, isDir ? 0o700 : 0o600)
        out.fixed++
        if (out.examples.length < 5) out.examples.push(path)
      } catch {
        // not ours (another user's file): the directory above it being 0700 still closes it
      }
    }
    if (isDir) {
      try {
        for (const name of readdirSync(path)) stack.push(join(path, name))
      } catch {
        // unreadable directory: left as it is
      }
    }
  }
  return out
}
