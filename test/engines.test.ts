// `npm install` prints no EBADENGINE warning: every package in the lock accepts the Node versions package.json's
// `engines` claims (from the lowest it allows), and the Node on this machine.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string } | string[] }> }

function refusing(nodeVersion: string): string[] {
  const out: string[] = []
  for (const [name, entry] of Object.entries(lock.packages)) {
    const range = !Array.isArray(entry.engines) ? entry.engines?.node : undefined
    if (range && !Bun.semver.satisfies(nodeVersion, range)) out.push(`${name} wants node ${range}`)
  }
  return out
}

test("every locked package accepts the lowest Node that `engines` allows", () => {
  const lowest = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(pkg.engines.node)?.[1]
  expect(lowest).toBeDefined()
  const version = [...lowest!.split('.'), '0', '0'].slice(0, 3).join('.')
  expect(refusing(version)).toEqual([])
})

test('every locked package accepts the Node on this machine', () => {
  const node = Bun.spawnSync(['node', '--version'], { stdout: 'pipe' })
  if (node.exitCode !== 0) return // no Node here: npm is not run either
  const version = node.stdout.toString().trim().replace(/^v/, '')
  expect(Bun.semver.satisfies(version, pkg.engines.node)).toBe(true)
  expect(refusing(version)).toEqual([])
})
