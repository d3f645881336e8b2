// The README and docs/ say only what is true of this repository: every relative link reaches a file (and its
// heading), every `npm run` script and CLI command the README shows exists, every repository path it names exists,
// and its configuration table lists exactly the variables src/config.ts reads.
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { ConfigSchema } from '../src/config'
import { ROOT } from './helpers/spawn-service'

const README = join(ROOT, 'README.md')
const DOCS = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(ROOT, 'docs', f))
const read = (file: string) => readFileSync(file, 'utf8')

/** The text outside fenced code blocks (links and headings are never looked for inside them). */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '')
}

/** GitHub's anchor for each heading of a file, duplicates numbered as GitHub numbers them. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const [, text] of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const plain = text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '')
    const slug = plain.toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, '').replace(/ /g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n === 0 ? slug : `${slug}-${n}`)
  }
  // and explicit anchors: <a id="regex"></a>
  for (const [, id] of prose(markdown).matchAll(/<a (?:id|name)="([^"]+)"/g)) out.add(id)
  return out
}

function links(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`(?!\])/g, '')
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1])
}

/** The CLI's commands, as its --help lists them: `project create`, `migrate`, … */
async function cliCommands(): Promise<Set<string>> {
  const proc = Bun.spawn([process.execPath, 'run', 'src/cli.ts', '--help'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const help = await new Response(proc.stdout).text()
  expect(await proc.exited).toBe(0)
  const commands = new Set<string>()
  for (const [, group, sub] of help.matchAll(/^ {2}([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/gm)) {
    commands.add(group)
    if (sub) commands.add(`${group} ${sub}`)
  }
  return commands
}

describe('README and docs', () => {
  test('every relative link reaches a file, and its heading when it names one', () => {
    const broken: string[] = []
    let checked = 0
    for (const file of [README, ...DOCS]) {
      for (const target of links(read(file))) {
        if (/^[a-z]+:/i.test(target)) continue // http:, https:, mailto:
        checked++
        const [path, anchor] = target.split('#')
        const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path))
        const where = `${relative(ROOT, file)} → ${target}`
        if (!existsSync(resolved)) {
          broken.push(`${where}: no such file`)
          continue
        }
        if (anchor !== undefined && (statSync(resolved).isDirectory() || !anchors(read(resolved)).has(anchor))) broken.push(`${where}: no such heading`)
      }
    }
    expect(broken).toEqual([])
    expect(checked).toBeGreaterThan(20)
  })

  test('the link checker refuses what is broken', () => {
    expect(anchors('# How an event travels\n## Keys\n## Keys\n<a id="regex"></a>\n```\n# not a heading\n```')).toEqual(new Set(['how-an-event-travels', 'keys', 'keys-1', 'regex']))
    expect(links('[a](x.md#y) `[b](not-a-link)`\n```\n[c](in-code)\n```')).toEqual(['x.md#y'])
  })

  test('every npm script, CLI command and repository path the README shows exists', async () => {
    const readme = read(README)
    const scripts = new Set(Object.keys(JSON.parse(read(join(ROOT, 'package.json'))).scripts))
    const commands = await cliCommands()
    const missing: string[] = []
    const runs = [...readme.matchAll(/npm run (?:-s )?([a-z][\w:-]*)/g)].map((m) => m[1])
    for (const script of runs) if (!scripts.has(script)) missing.push(`npm run ${script}`)
    const cli = [...readme.matchAll(/npm run (?:-s )?cli -- ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/g)]
    // `project create` must be a command; so must `migrate` (a command of one word: what follows is prose)
    const hasSubcommands = (group: string) => [...commands].some((c) => c.startsWith(`${group} `))
    for (const [, group, sub] of cli) {
      const known = hasSubcommands(group) ? commands.has(`${group} ${sub}`) : commands.has(group)
      if (!known) missing.push(`cli ${group}${sub ? ` ${sub}` : ''}`)
    }
    const paths = [...readme.matchAll(/(?<![\w/.-])((?:src|test|bench|docs|sql)\/[\w./-]*[\w])/g)].map((m) => m[1])
    for (const path of paths) if (!existsSync(join(ROOT, path))) missing.push(path)
    expect(missing).toEqual([])
    expect(runs.length).toBeGreaterThan(5)
    expect(cli.length).toBeGreaterThan(4)
    expect(paths.length).toBeGreaterThan(5)
    // the checker does refuse a command the CLI does not have
    expect(commands.has('project create')).toBe(true)
    expect(commands.has('project destroy')).toBe(false)
  })

  test('the configuration table lists exactly the variables src/config.ts reads', () => {
    const section = read(README).split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? ''
    const documented = new Set<string>()
    for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
      const firstCell = line.split('|')[1]
      for (const [, name] of firstCell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) documented.add(name)
    }
    const read_ = Object.keys(ConfigSchema.properties)
    expect(read_.filter((name) => !documented.has(name))).toEqual([])
    expect([...documented].filter((name) => !read_.includes(name))).toEqual([])
  })
})
