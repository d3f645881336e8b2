import { describe, expect, test } from 'bun:test'
import { compileFlag } from './compile'
import { evaluateFlag } from './evaluate'
import { RememberingRegex, sharedPythonRegex } from './shared-regex'
import type { EvalInput } from './types'

const FLAGS = { ignoreCase: true, dotAll: true }

describe('regexes shared by pattern', () => {
  test('one pattern is compiled once while in use; another pattern or other flags get their own', () => {
    const a = sharedPythonRegex('@example\\.com$', FLAGS)
    const b = sharedPythonRegex('@example\\.com$', FLAGS)
    expect(a.ok && b.ok && a.regex === b.regex).toBe(true)
    const other = sharedPythonRegex('@example\\.org$', FLAGS)
    const caseSensitive = sharedPythonRegex('@example\\.com$', { ignoreCase: false, dotAll: true })
    expect(other.ok && a.ok && other.regex !== a.regex).toBe(true)
    expect(caseSensitive.ok && a.ok && caseSensitive.regex !== a.regex).toBe(true)
    expect(sharedPythonRegex('(unclosed', FLAGS).ok).toBe(false)
  })

  test('a subject tested again is answered without running the pattern, and answers stay right as subjects change', () => {
    let runs = 0
    const regex = new RememberingRegex({ source: 'x', test: (s) => (runs++, s.includes('x')) })
    const subject = 'a-x-b'
    expect(regex.test(subject)).toBe(true)
    expect(regex.test(subject)).toBe(true)
    expect(runs).toBe(1)
    expect(regex.test('abc')).toBe(false)
    expect(regex.test(['a', '-x-', 'b'].join(''))).toBe(true)
    expect(regex.test('')).toBe(false)
    expect(runs).toBe(4)
  })

  test('flags sharing a pattern decide as flags with patterns of their own', () => {
    const flag = (id: number, pattern: string) =>
      compileFlag({ id, key: `f${id}`, active: true, deleted: false, ensure_experience_continuity: false, version: 1, filters: { groups: [{ properties: [{ key: 'email', value: pattern, operator: 'regex', type: 'person' }], rollout_percentage: 100 }] } })
    const shared = [flag(1, '^admin@'), flag(2, '^admin@'), flag(3, '^ADMIN@')]
    for (const email of ['admin@x.com', 'user@x.com', 'Admin@y', '']) {
      const input = { distinctId: 'u', groups: {}, groupTypeNames: new Map(), personOverrides: { email }, now: new Date() } as unknown as EvalInput
      const enabled = shared.map((f) => {
        const outcome = evaluateFlag(f, input)
        return outcome.ok && outcome.result.enabled
      })
      expect(enabled).toEqual(Array(3).fill(/^admin@/i.test(email)))
    }
  })
})
