import { describe, expect, test } from 'bun:test'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Checkpoint } from './checkpoint'

describe('checkpoint', () => {
  test('starts empty and keeps each consumer’s position across reopen', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'phog-cp-')), 'checkpoint')
    const a = new Checkpoint(file)
    expect(a.done('store')).toBe(0)
    a.update((s) => {
      s.attempting.store = 10
    })
    a.update((s) => {
      s.done.store = 10
      s.done.learn = 7
    })
    a.close()
    const b = new Checkpoint(file)
    expect([b.done('store'), b.done('learn'), b.attempting('store')]).toEqual([10, 7, 10])
    b.close()
  })

  test('a torn write of the newest slot falls back to the previous state', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'phog-cp-')), 'checkpoint')
    const a = new Checkpoint(file)
    a.update((s) => void (s.done.store = 1)) // version 1 → slot 1
    a.update((s) => void (s.done.store = 2)) // version 2 → slot 0
    a.close()
    const fd = openSync(file, 'r+')
    writeSync(fd, Buffer.from('garbage'), 0, 7, 20) // damage slot 0
    closeSync(fd)
    const b = new Checkpoint(file)
    expect(b.done('store')).toBe(1)
    b.close()
  })
})

describe('checkpoint file size', () => {
  test('both slots are on disk from the start, so an update never needs a new block (a full disk cannot stop it)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-ckpt-'))
    const path = join(dir, 'checkpoint')
    const c = new Checkpoint(path)
    expect(statSync(path).size).toBe(1024)
    c.update((s) => {
      s.done.store = 7
    })
    c.update((s) => {
      s.done.store = 8
    })
    expect(statSync(path).size).toBe(1024)
    c.close()
    // an older file holding one slot is extended, and keeps its state
    writeFileSync(join(dir, 'old'), readFileSync(path).subarray(0, 512))
    const old = new Checkpoint(join(dir, 'old'))
    expect(statSync(join(dir, 'old')).size).toBe(1024)
    expect(old.done('store')).toBe(8)
    old.close()
    rmSync(dir, { recursive: true, force: true })
  })
})
