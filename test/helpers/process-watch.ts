// Watching a server process from outside, as a supervisor does: has it become healthy, and is anything left in
// its process group once it is gone.
import { readFileSync } from 'node:fs'

/** Polls `${url}/_health` every 100 ms: true once it answers 2xx, false if `withinMs` passes first. */
export async function healthy(url: string, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/_health`, { signal: AbortSignal.timeout(1000) })).ok) return true
    } catch {
      // not yet
    }
    await Bun.sleep(100)
  }
  return false
}

/** Pids in a process group (from /proc, zombies left out), so a test can prove nothing was left behind. */
export function groupMembers(pgid: number): number[] {
  const out: number[] = []
  for (const entry of new Bun.Glob('[0-9]*').scanSync({ cwd: '/proc', onlyFiles: false })) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') out.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return out
}
