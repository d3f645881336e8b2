// Attacks on this round's hot-path changes in the engine: the hash memo's per-table slots (and the request's memo
// entry kept in module variables), and regexes shared by pattern. A passing test documents a defence.
import { describe, expect, test } from 'bun:test'
import { buildEntry } from '../cache'
import type { ProjectFlags } from '../repository'
import { compileFlag, evaluateFlag, type CompiledFlag, type EvalInput, type FlagDefinition, type FlagOutcome } from './index'
import { HashMemo, type MemoTable } from './hash-memo'
import { compilePythonRegex } from './python/pyregex'
import { sharedPythonRegex } from './shared-regex'

const NOW = new Date('2026-11-28T12:00:00Z')

function definition(id: number, key: string, filters: Record<string, unknown>, version = 1): FlagDefinition {
  return { id, key, active: true, deleted: false, ensure_experience_continuity: false, version, filters } as FlagDefinition
}

const VARIANTS = { variants: [{ key: 'a', rollout_percentage: 34 }, { key: 'b', rollout_percentage: 33 }, { key: 'c', rollout_percentage: 33 }] }
const rolloutFlag = (id: number, key: string, version = 1) =>
  definition(id, key, { groups: [{ properties: [], rollout_percentage: 50 }], multivariate: VARIANTS }, version)

/** what buildEntry does: each active flag gets a slot in one table */
function placed(flags: CompiledFlag[]): CompiledFlag[] {
  const table: MemoTable = { size: flags.length }
  flags.forEach((f, i) => {
    f.memoTable = table
    f.memoSlot = i
  })
  return flags
}

function input(distinctId: string, hashMemo?: HashMemo, extra: Partial<EvalInput> = {}): EvalInput {
  return { distinctId, groups: {}, groupTypeNames: new Map(), personOverrides: {}, groupOverrides: {}, storedPerson: undefined, storedGroups: undefined, now: NOW, hashMemo, ...extra }
}

/** the same flags' answers with no memo at all: the reference */
function reference(defs: FlagDefinition[], distinctId: string): FlagOutcome[] {
  return defs.map((d) => evaluateFlag(compileFlag(d), input(distinctId)))
}

const projectFlags = (defs: FlagDefinition[]): ProjectFlags => ({ version: 1, flags: defs as never, groupTypes: [] })

describe('hash memo slots: answers', () => {
  test('an identifier alternating between two projects whose tables put the same keys at other slots answers as without a memo', () => {
    const defsA = Array.from({ length: 40 }, (_, i) => rolloutFlag(i + 1, `flag-${i}`))
    // project B: the same keys in reverse order (slot i of A is another key than slot i of B), plus its own
    const defsB = [...defsA].reverse().map((d, i) => ({ ...d, id: 1000 + i }))
    defsB.push(rolloutFlag(2000, 'only-in-b'))
    const a = placed(defsA.map((d) => compileFlag(d)))
    const b = placed(defsB.map((d) => compileFlag(d)))
    const memo = new HashMemo(4 * 1024 * 1024)
    for (let round = 0; round < 4; round++) {
      for (const id of ['alice', 'bob', 'carol']) {
        // one request to A, one to B, one mixing both (a reload in the middle of a request)
        expect(a.map((f) => evaluateFlag(f, input(id, memo)))).toEqual(reference(defsA, id))
        expect(b.map((f) => evaluateFlag(f, input(id, memo)))).toEqual(reference(defsB, id))
        const mixed = input(id, memo)
        const interleaved = a.flatMap((f, i) => [evaluateFlag(f, mixed), evaluateFlag(b[i], mixed)])
        const expected = reference(defsA, id).flatMap((o, i) => [o, reference([defsB[i]], id)[0]])
        expect(interleaved).toEqual(expected)
      }
    }
    expect(memo.size.bytes).toBeLessThanOrEqual(memo.maxBytes)
  })

  test('a reload between the two passes of one request (kept flags re-slotted, a changed flag renamed) answers as without a memo', () => {
    const defs = Array.from({ length: 30 }, (_, i) => rolloutFlag(i + 1, `f${i}`))
    const memo = new HashMemo(4 * 1024 * 1024)
    const first = buildEntry(7, projectFlags(defs))
    const request = input('dora', memo)
    const firstPass = first.active.slice(0, 15).map((f) => evaluateFlag(f, request))
    // the reload: flag 3 gets a new key and version, flag 5 is gone, a new flag comes first (every kept slot moves)
    const reloadedDefs = [rolloutFlag(99, 'newcomer'), ...defs.filter((d) => d.id !== 5).map((d) => (d.id === 3 ? rolloutFlag(3, 'renamed', 2) : d))]
    const second = buildEntry(7, projectFlags(reloadedDefs), Date.now(), first)
    // another request runs on the new entry in between, filling the new table's slots
    second.active.map((f) => evaluateFlag(f, input('dora', memo)))
    // the deferred pass of the first request: still the old entry's flags (with the same input)
    const secondPass = first.active.slice(15).map((f) => evaluateFlag(f, request))
    expect([...firstPass, ...secondPass]).toEqual(reference(defs, 'dora'))
    expect(second.active.map((f) => evaluateFlag(f, input('dora', memo)))).toEqual(reference(reloadedDefs, 'dora'))
    expect(first.active.map((f) => evaluateFlag(f, input('dora', memo)))).toEqual(reference(defs, 'dora'))
  })

  test('an entry evicted in the middle of a request (by another identifier) answers as without a memo, and the count stays in budget', () => {
    const defs = Array.from({ length: 200 }, (_, i) => rolloutFlag(i + 1, `k${i}`))
    const flags = placed(defs.map((d) => compileFlag(d)))
    // room for about one identifier with its slots and hashes
    const memo = new HashMemo(1024 + 200 * 16 + 400 * 80 + 2000)
    const request = input('erin', memo)
    const half = flags.slice(0, 100).map((f) => evaluateFlag(f, request))
    for (const other of ['x1', 'x2', 'x3']) flags.map((f) => evaluateFlag(f, input(other, memo)))
    expect(memo.size.bytes).toBeLessThanOrEqual(memo.maxBytes)
    const rest = flags.slice(100).map((f) => evaluateFlag(f, request))
    expect([...half, ...rest]).toEqual(reference(defs, 'erin'))
    expect(memo.size.bytes).toBeLessThanOrEqual(memo.maxBytes)
    // and again from what is remembered
    expect(flags.map((f) => evaluateFlag(f, input('erin', memo)))).toEqual(reference(defs, 'erin'))
  })

  test('the request entry kept in module variables is not carried over to another memo (a second service in one process)', () => {
    const defs = Array.from({ length: 10 }, (_, i) => rolloutFlag(i + 1, `m${i}`))
    const flags = placed(defs.map((d) => compileFlag(d)))
    const memoA = new HashMemo(1024 * 1024)
    const memoB = new HashMemo(1024 * 1024)
    const shared = input('frank', memoA)
    flags.map((f) => evaluateFlag(f, shared))
    flags.map((f) => evaluateFlag(f, input('frank', memoB)))
    expect(memoA.size.identifiers).toBe(1)
    expect(memoB.size.identifiers).toBe(1)
  })

  test('alternating tables never pushes the memo over budget, whatever the budget', () => {
    const big = placed(Array.from({ length: 500 }, (_, i) => compileFlag(rolloutFlag(i + 1, `big${i}`))))
    const small = placed(Array.from({ length: 3 }, (_, i) => compileFlag(rolloutFlag(600 + i, `small${i}`))))
    for (const budget of [1500, 5000, 9000, 20_000, 100_000]) {
      const memo = new HashMemo(budget)
      for (let i = 0; i < 30; i++) {
        const id = `u${i % 4}`
        for (const f of i % 2 ? big : small) evaluateFlag(f, input(id, memo))
        expect(memo.size.bytes).toBeLessThanOrEqual(budget)
        expect(memo.size.bytes).toBeGreaterThanOrEqual(0)
      }
    }
  })
})

describe('hash memo slots: memory', () => {
  test('an identifier that hashes one flag of a 5,000-flag project costs the memo little more than one hash', () => {
    // 4,999 flags at 100% (no hash), one at 50%: a typical large project where few flags roll out partially
    const defs = Array.from({ length: 5000 }, (_, i) =>
      definition(i + 1, `flag-${i}`, { groups: [{ properties: [], rollout_percentage: i === 4999 ? 50 : 100 }] }),
    )
    const flags = placed(defs.map((d) => compileFlag(d)))
    const memo = new HashMemo(16 * 1024 * 1024)
    for (let i = 0; i < 1000; i++) {
      const request = input(`visitor-${i}`, memo)
      for (const f of flags) evaluateFlag(f, request)
    }
    const perIdentifier = memo.size.bytes / memo.size.identifiers
    // without the slot arrays: 1,024 + 80 bytes; the slots add 16 bytes per flag of the table (80 KB here)
    expect({ identifiers: memo.size.identifiers, perIdentifier: Math.round(perIdentifier) }).toEqual({ identifiers: 1000, perIdentifier: expect.any(Number) })
    expect(perIdentifier).toBeLessThan(10 * 1024)
  })
})

describe('regexes shared by pattern', () => {
  const regexFlag = (id: number, pattern: string, key = `r${id}`) =>
    compileFlag(definition(id, key, { groups: [{ properties: [{ key: 'email', value: pattern, operator: 'regex', type: 'person' }], rollout_percentage: 100 }] }))
  const enabled = (outcome: FlagOutcome) => (outcome.ok ? outcome.result.enabled : outcome.error)

  test('the same pattern in two projects and two flags answers each request for its own subject', () => {
    const projectA = regexFlag(1, '^admin@corp\\.com$')
    const projectB = regexFlag(2, '^admin@corp\\.com$')
    const caseVariant = regexFlag(3, '^ADMIN@CORP\\.COM$')
    const subjects = ['admin@corp.com', 'ADMIN@corp.com', 'someone@corp.com', 'admin@corp.com\n', 'admin@corp.com']
    // the reference: the pattern compiled on its own (Python's `$` also matches before a final newline)
    const own = compilePythonRegex('^admin@corp\\.com$', { ignoreCase: true, dotAll: true })
    if (!own.ok) throw new Error('pattern')
    for (const email of subjects) {
      const expected = own.regex.test(email)
      const a = input('u', undefined, { personOverrides: { email } })
      const b = input('v', undefined, { personOverrides: { email: email + 'x' } })
      // interleaved: the shared regex's last subject alternates between the two requests
      expect([enabled(evaluateFlag(projectA, a)), enabled(evaluateFlag(projectB, b)), enabled(evaluateFlag(caseVariant, a))]).toEqual([
        expected,
        own.regex.test(email + 'x'),
        expected,
      ])
    }
  })

  test('a pattern falls out of the table (4,096 newer patterns) while a flag holds it: the flag still answers, a new copy too', () => {
    const held = regexFlag(1, '^keep-me-[0-9]+$')
    for (let i = 0; i < 5000; i++) sharedPythonRegex(`^unique-${i}$`, { ignoreCase: true, dotAll: true })
    const again = regexFlag(2, '^keep-me-[0-9]+$')
    for (const email of ['keep-me-1', 'KEEP-ME-22', 'keep-me-', 'other']) {
      const request = input('u', undefined, { personOverrides: { email } })
      const expected = /^keep-me-[0-9]+$/i.test(email)
      expect([enabled(evaluateFlag(held, request)), enabled(evaluateFlag(again, request))]).toEqual([expected, expected])
    }
  })

  test('many unique patterns do not keep their compiled forms once no flag holds them', () => {
    Bun.gc(true)
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < 20_000; i++) sharedPythonRegex(`^(a|b)+unique-pattern-number-${i}-[a-z]{2,5}$`, { ignoreCase: true, dotAll: true })
    Bun.gc(true)
    const grown = process.memoryUsage().heapUsed - before
    // at most the table's 4,096 keys (short strings) and dead WeakRefs: well under 16 MB
    expect(grown).toBeLessThan(16 * 1024 * 1024)
  })
})
