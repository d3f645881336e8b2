// The backup's manifest (manifest.json beside the copies) and the answers of POST /api/instance/backup/.
import { t, type Static } from 'elysia'
import { model } from '../http/openapi'

/** Bumped when what a backup directory holds changes in a way an older `restore` cannot read. */
export const BACKUP_FORMAT = 1

export const BackupFile = t.Object({
  path: t.String({ description: 'relative to the backup directory' }),
  bytes: t.Integer(),
  sha256: t.String(),
})
export type BackupFile = Static<typeof BackupFile>

const Counts = t.Record(t.String(), t.Integer(), { description: 'rows per table (events: in the copied store, not counting the copied log; recordings: sessions in the copied recordings store, present once one was stored)' })

export const Manifest = t.Object({
  format: t.Integer({ description: 'the layout of this directory (restore refuses a newer one)' }),
  phog_version: t.String(),
  created_at: t.String({ description: 'ISO 8601, when the backup began' }),
  finished_at: t.String(),
  stores: t.Object({ metadata: t.Literal('pglite'), events: t.Union([t.Literal('sqlite'), t.Literal('duckdb')]) }),
  schema: t.Object({
    postgres: t.Array(t.String(), { description: 'migrations applied to the metadata store' }),
    events: t.Array(t.String(), { description: 'migrations applied to the event store' }),
  }),
  counts: Counts,
  counts_by_project: t.Record(t.String(), Counts, { description: 'per project id' }),
  log: t.Object({
    records: t.Integer({ description: 'records of the write-ahead log copied (not yet in the copied event store, or in doubt)' }),
    first_seq: t.Integer(),
    last_seq: t.Integer(),
  }),
  files: t.Array(BackupFile),
})
export type Manifest = Static<typeof Manifest>

export const BackupAnswer = model(
  'InstanceBackup',
  t.Object({
    path: t.String({ description: 'the backup directory on the server (DATA_DIR/backups/phog-backup-<time>)' }),
    manifest: Manifest,
  }),
)

/** The route takes no settings yet: where the copy goes is the server's choice (DATA_DIR/backups/). */
export const BackupRequest = model('InstanceBackupRequest', t.Object({}, { description: 'empty: the backup is written to DATA_DIR/backups/phog-backup-<time>/' }))
