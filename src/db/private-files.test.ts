import { describe, expect, test } from 'bun:test'
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { securePrivateDir } from './private-files'

describe('securePrivateDir', () => {
  test('tightens an existing tree to 0700/0600 and says how many entries it fixed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-perm-'))
    try {
      chmodSync(dir, 0o755)
      mkdirSync(join(dir, 'sub'))
      chmodSync(join(dir, 'sub'), 0o777)
      writeFileSync(join(dir, 'sub', 'f'), 'x')
      chmodSync(join(dir, 'sub', 'f'), 0o666)
      const fixed = securePrivateDir(dir)
      expect(fixed.fixed).toBe(3)
      expect(lstatSync(dir).mode & 0o777).toBe(0o700)
      expect(lstatSync(join(dir, 'sub')).mode & 0o777).toBe(0o700)
      expect(lstatSync(join(dir, 'sub', 'f')).mode & 0o777).toBe(0o600)
      expect(securePrivateDir(dir).fixed).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a shared directory (sticky, like /tmp) is left alone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-perm-'))
    try {
      chmodSync(dir, 0o1777)
      writeFileSync(join(dir, 'someone-elses'), 'x')
      chmodSync(join(dir, 'someone-elses'), 0o644)
      const result = securePrivateDir(dir)
      expect(result.skipped).toContain('shared')
      expect(lstatSync(join(dir, 'someone-elses')).mode & 0o777).toBe(0o644)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
