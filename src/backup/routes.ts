// POST /api/instance/backup/: a backup of the embedded stores into DATA_DIR/backups/phog-backup-<time>/, for the
// instance's owners (the owners of its first organization) with an unrestricted key, or a session and its CSRF token.
import { Elysia } from 'elysia'
import { join } from 'node:path'
import type { Sql } from 'postgres'
import { errors } from '../http/errors'
import type { RateLimiter } from '../http/rate-limit'
import type { PersonalKeyAuth, Principal } from '../projects/auth'
import { personalKeyGuard } from '../projects/guards'
import { documentedAs } from '../http/openapi'
import { BackupAnswer, BackupRequest } from './model'
import type { BackupService } from './service'
import { isInstanceOwner } from './repository'

async function assertInstanceOwner(sql: Sql, principal: Principal): Promise<void> {
  const unrestricted = principal.scopes.includes('*') && principal.scopedTeams === null && principal.scopedOrganizations === null
  if (!unrestricted || !(await isInstanceOwner(sql, principal.userId))) {
    throw errors.permissionDenied('Only an owner of the instance’s first organization, with an unrestricted key or a session, may take a backup.')
  }
}

/** Where the HTTP route writes: a new directory per backup, named by its time. */
export function backupDirectory(dataDir: string, now = new Date()): string {
  return join(dataDir, 'backups', `phog-backup-${now.toISOString().replaceAll(':', '-').replace(/\.\d+Z$/, 'Z')}`)
}

export function backupRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter; dataDir: string; backups: BackupService | null }) {
  return new Elysia({ name: 'backup' }).use(personalKeyGuard(deps.auth, deps.limiter)).post(
    '/api/instance/backup/',
    async ({ principal }) => {
      await assertInstanceOwner(deps.sql, principal)
      if (!deps.backups) {
        throw errors.validation('invalid_input', 'This service keeps its data in Postgres and ClickHouse: back them up with their own tools (docs/operations.md#backups).')
      }
      return deps.backups.run(backupDirectory(deps.dataDir))
    },
    {
      body: documentedAs(BackupRequest),
      response: { 200: BackupAnswer },
      detail: {
        tags: ['instance'],
        summary: 'Back up the embedded stores while the service runs (owners only; one at a time, 409 while one runs)',
      },
    },
  )
}
