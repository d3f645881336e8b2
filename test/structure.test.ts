// The layers, checked: no two folders of src/ import each other, and http/ (plumbing) imports no capability.
// `bun test test/structure.test.ts` prints the folder-level import graph.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { ROOT } from './helpers/spawn-service'

const IMPORT = /(?:import|export)[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g

function folderEdges(): Set<string> {
  const src = join(ROOT, 'src')
  const edges = new Set<string>()
  for (const file of new Bun.Glob('**/*.ts').scanSync({ cwd: src })) {
    if (file.endsWith('.test.ts')) continue
    const from = file.split('/')[0]!
    if (!file.includes('/')) continue // the composition root (app, services, main, cli) wires everything
    for (const m of readFileSync(join(src, file), 'utf8').matchAll(IMPORT)) {
      const target = relative(src, normalize(join(dirname(join(src, file)), m[1]!)))
      const to = target.split('/')[0]!
      if (target.includes('/') && to !== from) edges.add(`${from} -> ${to}`)
    }
  }
  return edges
}

describe('layers', () => {
  const edges = folderEdges()
  console.log(`[structure] folder imports:\n  ${[...edges].sort().join('\n  ')}`)

  test('no two folders of src/ import each other', () => {
    const cycles = [...edges].filter((e) => {
      const [a, b] = e.split(' -> ')
      return edges.has(`${b} -> ${a}`)
    })
    expect(cycles).toEqual([])
  })

  test('http/ is plumbing: it imports no capability (only the database client, for connection errors)', () => {
    expect([...edges].filter((e) => e.startsWith('http -> ') && e !== 'http -> db')).toEqual([])
  })
})
