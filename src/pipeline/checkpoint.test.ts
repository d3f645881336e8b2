import { describe, expect, test } from 'bun:test'
import { mkdtempSync, openSync, writeSync, closeSync } from 'node:fs'
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
