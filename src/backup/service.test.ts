import { describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { copyPrefix, describeFiles, isEmptyOrAbsent, writeJsonDurably } from './files'
import { backupDirectory } from './routes'
import { restoredCheckpoint } from './service'
import { verifyBackup } from './verify'

describe('the copied checkpoint', () => {
  test('keeps what each consumer finished and puts every copied record after it in doubt', () => {
    const state = { done: { store: 90, learn: 70 }, attempting: { store: 95 } }
    expect(restoredCheckpoint(state, 120)).toEqual({ done: { store: 90, learn: 70 }, attempting: { store: 120, learn: 120 } })
    // a consumer that never finished anything still has the store writer in doubt
    expect(restoredCheckpoint({ done: {}, attempting: {} }, 5)).toEqual({ done: {}, attempting: { store: 5 } })
    // an attempt beyond the copy stays (the copied store may hold it)
    expect(restoredCheckpoint({ done: { store: 3 }, attempting: { store: 9 } }, 4).attempting.store).toBe(9)
  })
})

describe('backup files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'phog-backup-unit-'))

  test('a segment is copied up to its last whole record, not what follows it', async () => {
    writeFileSync(join(dir, 'segment'), Buffer.from('0123456789stale-bytes'))
    await copyPrefix(join(dir, 'segment'), join(dir, 'copy'), 10)
    expect(readFileSync(join(dir, 'copy'), 'utf8')).toBe('0123456789')
    expect(isEmptyOrAbsent(join(dir, 'nothing-here'))).toBe(true)
    expect(isEmptyOrAbsent(dir)).toBe(false)
  })

  test('verify refuses a manifest that names a path outside the backup, and a file missing', async () => {
    const backup = join(dir, 'backup')
    rmSync(backup, { recursive: true, force: true })
    mkdirSync(backup)
    writeFileSync(join(backup, 'events.sqlite'), 'x')
    const files = await describeFiles(backup)
    writeJsonDurably(join(backup, 'manifest.json'), {
      format: 1,
      phog_version: '0.1.0',
      created_at: '2026-12-02T00:00:00.000Z',
      finished_at: '2026-12-02T00:00:01.000Z',
      stores: { metadata: 'pglite', events: 'sqlite' },
      schema: { postgres: [], events: [] },
      counts: { events: 0 },
      counts_by_project: {},
      log: { records: 0, first_seq: 1, last_seq: 0 },
      files: [...files, { path: '../../etc/passwd', bytes: 1, sha256: 'x' }],
    })
    const report = await verifyBackup(backup, { openCopies: false })
    expect(report.ok).toBe(false)
    expect(report.problems).toContain('../../etc/passwd: not a path inside the backup')
    expect(report.problems).toContain('metadata.tar: not in the manifest')
  })

  test('verify refuses a manifest that counts recordings without their copy', async () => {
    const backup = join(dir, 'torn')
    rmSync(backup, { recursive: true, force: true })
    mkdirSync(backup)
    writeFileSync(join(backup, 'events.sqlite'), 'x')
    writeFileSync(join(backup, 'metadata.tar'), 'x')
    writeJsonDurably(join(backup, 'manifest.json'), {
      format: 1,
      phog_version: '0.1.0',
      created_at: '2026-12-02T00:00:00.000Z',
      finished_at: '2026-12-02T00:00:01.000Z',
      stores: { metadata: 'pglite', events: 'sqlite' },
      schema: { postgres: [], events: [] },
      counts: { events: 0, recordings: 3 },
      counts_by_project: {},
      log: { records: 0, first_seq: 1, last_seq: 0 },
      files: await describeFiles(backup),
    })
    const report = await verifyBackup(backup, { openCopies: false })
    expect(report.problems).toEqual(['recordings.sqlite: not in the manifest'])
  })

  test('the HTTP route names each backup by its time, under DATA_DIR/backups', () => {
    expect(backupDirectory('/data', new Date('2026-12-02T05:06:07.123Z'))).toBe('/data/backups/phog-backup-2026-12-02T05-06-07Z')
  })
})
