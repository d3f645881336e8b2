// Temp directories removed at the end of the test run (see preload.ts).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const dirs = new Set<string>()

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.add(dir)
  return dir
}

export function removeTempDirs(): void {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  dirs.clear()
}
