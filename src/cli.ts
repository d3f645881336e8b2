// The admin CLI: `npm run cli -- <command>`. The result is one JSON object on stdout; logs go to stderr.
// Works with or without a running server: on the embedded store it joins the server's database socket.
import { UUID_PATTERN } from './http/fields'
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, type Config } from './config'
import { migratePostgres } from './db/migrate'
import { inTransaction, openDatabase, type Database } from './db/postgres'
import { createLogger, exitAfterFlush } from './log'
import { securePrivateDir } from './db/private-files'
import { ApiError } from './http/errors'
import { announceKeyChange } from './projects/key-changes'
import { allPersonalKeys, createPersonalKeyFor, revokePersonalKey, rollPersonalKey } from './projects/personal-keys'
import { createOrganization, createUser, existingUser, insertUser, OWNER } from './projects/accounts'
import { allProjects, createProject, defaultKeyHolder, resetProjectToken } from './projects/repository'
import { createEventStore } from './events/factory'
import { dlqCommand } from './pipeline/dlq-cli'
import { openLearnerReplay } from './people/learner-replay'
import { checkedPasswordOr, readPasswordFromStdin, userCommand } from './users/cli'
import { ownIfFirstToSignIn, setPassword } from './users/service'
import { backupCommand, ReportedFailure } from './backup/cli'
import { MOVE_USAGE, moveCommand } from './move/cli'
import { IMPORT_USAGE, importCommand } from './import/cli'

const USAGE = `usage: npm run cli -- <command>
  project create --name NAME [--organization UUID]   create a project; prints {"id", "api_token"}
  project list                                        every project with its token; prints {"results"}
  project reset-token --id N                          a new project token; prints {"id", "api_token"}
  organization create --name NAME                     create an organization; prints {"id", "name"}
  user create --email EMAIL [--organization UUID] [--password-stdin]
                                                      create a user, member of that organization (default: the first;
                                                      its owner when it has no member yet); with --password-stdin the
                                                      console password is read from stdin; prints {"id", "email", "organization"}
  personal-key create --label LABEL [--email EMAIL] [--scopes S,S]
                                                      create a personal API key for an existing user (default
                                                      admin@localhost; scopes default *); prints {"key", "id", ...}
                                                      (the key is shown only once)
  personal-key list                                   every user's keys, masked; prints {"results"}
  personal-key revoke --id ID                         delete a key; prints {"id", "revoked": true}
  personal-key roll --id ID                           a new value for the key; prints the key with its "value"
  migrate                                             apply Postgres and event-store migrations
  dlq list                                            dead-lettered events, by file and reason
  dlq replay [--file NAME]                            hand dead-lettered events back to the event store or the learner
  user set-password --email E --password-stdin        a console password; ends the user's sessions; prints {"id", "email"}
${IMPORT_USAGE}
  backup --to DIR                                     a consistent copy of the embedded stores into a new or empty
                                                      directory, while the service runs (or without it)
  verify --from DIR                                   check a backup: its manifest, every checksum, that the copies
                                                      open; exit 1 with the problems when it does not verify
  restore --from DIR                                  a backup into DATA_DIR, which must be empty or absent
${MOVE_USAGE}`

export class UsageError extends Error {}

function print(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

async function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  // what the CLI creates in DATA_DIR (the embedded database when no server runs) is private like the server's
  if (!config.DATABASE_URL) securePrivateDir(config.DATA_DIR)
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolMax: 2,
    joinRunningServer: true,
  })
  try {
    await migratePostgres(db.sql)
    return await fn(db)
  } finally {
    await db.close()
  }
}

/** A refusal of the shared validation (400) is the caller's mistake: one line, exit 64, like a usage error. */
async function refusalsAsUsage<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) throw new UsageError(error.detail)
    throw error
  }
}

/**
 * Whose key `personal-key create` makes: the user with --email, who must exist. Without --email, the first owner who
 * can sign in (so the key shows in their Settings), else the default admin (admin@localhost, whose keys that owner
 * takes over once created); on a store with no user at all admin@localhost is created, as the owner of the first
 * organization, which is how a store started without INIT_PERSONAL_API_KEY gets its first key.
 */
async function keyOwner(sql: Database['sql'], email: string | undefined): Promise<{ id: number; email: string }> {
  if (email !== undefined) return existingUser(sql, email)
  return sql.begin(async (tx) => {
    const t = inTransaction(tx)
    await t`lock table users in share row exclusive mode`
    const holder = await defaultKeyHolder(t)
    if (holder) return holder
    const [anyone] = await t`select 1 from users limit 1`
    if (anyone) throw new UsageError('personal-key create needs --email EMAIL (the store has users, none of them admin@localhost)')
    const owner = await insertUser(t, { email: 'admin@localhost', level: OWNER })
    return { id: owner.id, email: owner.email }
  }) as Promise<{ id: number; email: string }>
}

/** `--help`: the usage on stdout, exit 0. */
export class HelpRequested extends Error {}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        organization: { type: 'string' },
        label: { type: 'string' },
        email: { type: 'string' },
        scopes: { type: 'string' },
        file: { type: 'string' },
        id: { type: 'string' },
        to: { type: 'string' },
        from: { type: 'string' },
        'database-url': { type: 'string' },
        'clickhouse-url': { type: 'string' },
        project: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        'password-stdin': { type: 'boolean' },
      },
    })
  } catch (error) {
    // e.g. "Unknown option '--nmae'": one line, not a stack
    throw new UsageError(`${(error as Error).message.split('\n')[0]} (see --help)`)
  }
}

export async function runCli(argv: string[], config: Config): Promise<unknown> {
  const { positionals, values } = parse(argv)
  const [group, action] = positionals
  if (values.help) throw new HelpRequested(USAGE)
  if (!group) throw new UsageError(USAGE)

  if (group === 'project' && action === 'create') {
    if (!values.name) throw new UsageError('project create needs --name NAME')
    const organizationId = values.organization
    if (organizationId !== undefined && !UUID_PATTERN.test(organizationId)) throw new UsageError(`--organization must be an organization id (a UUID), not ${JSON.stringify(organizationId)}`)
    return withDatabase(config, (db) =>
      createProject(db.sql, { name: values.name!, organizationId }).catch((error: { code?: string }) => {
        if (error?.code === '23503') throw new UsageError(`no organization has the id ${organizationId}`)
        throw error
      }),
    )
  }
  if (group === 'project' && action === 'list') {
    return withDatabase(config, async (db) => ({
      results: (await allProjects(db.sql)).map((p) => ({ id: p.id, name: p.name, organization: p.organizationId, api_token: p.apiToken, api_token_hint: p.apiTokenMask })),
    }))
  }
  if (group === 'project' && action === 'reset-token') {
    const id = Number(values.id)
    if (!values.id || !Number.isInteger(id) || id <= 0) throw new UsageError('project reset-token needs --id N')
    return withDatabase(config, (db) =>
      db.sql.begin(async (transaction) => {
        const tx = inTransaction(transaction)
        const [found] = await tx`select id from projects where id = ${id}`
        if (!found) throw new Error(`no project with id ${id}`)
        const token = await resetProjectToken(tx, id)
        await announceKeyChange(tx)
        return { id, api_token: token }
      }),
    )
  }
  if (group === 'personal-key' && action === 'list') {
    return withDatabase(config, async (db) => ({ results: await allPersonalKeys(db.sql) }))
  }
  if (group === 'personal-key' && action === 'revoke') {
    if (!values.id) throw new UsageError('personal-key revoke needs --id ID')
    return withDatabase(config, async (db) => {
      if (!(await revokePersonalKey(db.sql, values.id!))) throw new Error(`no personal key with id ${values.id}`)
      return { id: values.id, revoked: true }
    })
  }
  if (group === 'personal-key' && action === 'roll') {
    if (!values.id) throw new UsageError('personal-key roll needs --id ID')
    return withDatabase(config, async (db) => {
      try {
        return await rollPersonalKey(db.sql, values.id!)
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) throw new Error(`no personal key with id ${values.id}`)
        throw error
      }
    })
  }
  if (group === 'personal-key' && action === 'create') {
    if (!values.label) throw new UsageError('personal-key create needs --label LABEL')
    const scopes = values.scopes === undefined ? ['*'] : values.scopes.split(',').map((s) => s.trim())
    return withDatabase(config, (db) =>
      refusalsAsUsage(async () => {
        const user = await keyOwner(db.sql, values.email)
        // the API's own validation: label length, scopes, the 10-key cap
        const created = await createPersonalKeyFor(db.sql, user.id, { label: values.label, scopes })
        return { key: created.value, id: created.id, label: created.label, scopes: created.scopes, user_id: created.user_id, email: user.email }
      }),
    )
  }
  if (group === 'organization' && action === 'create') {
    if (!values.name) throw new UsageError('organization create needs --name NAME')
    return withDatabase(config, (db) => refusalsAsUsage(() => createOrganization(db.sql, { name: values.name })))
  }
  if (group === 'user' && action === 'create') {
    if (!values.email) throw new UsageError('user create needs --email EMAIL')
    // read and checked before anything is written: a refused password leaves no user behind
    const password = values['password-stdin'] ? checkedPasswordOr((m) => new UsageError(m), await readPasswordFromStdin()) : undefined
    return withDatabase(config, (db) =>
      refusalsAsUsage(async () => {
        const user = await createUser(db.sql, { email: values.email, organizationId: values.organization })
        if (password !== undefined) {
          await setPassword(db.sql, user.email, password)
          await ownIfFirstToSignIn(db.sql, user)
        }
        return { id: user.id, email: user.email, organization: user.organization }
      }),
    )
  }
  const userResult = await userCommand(group, action, values, (fn) => withDatabase(config, (db) => fn(db.sql)), (m) => new UsageError(m))
  if (userResult !== null) return userResult
  if (group === 'migrate') {
    const postgres = await withDatabase(config, (db) => migratePostgres(db.sql))
    const events = createEventStore(config)
    await events.init()
    await events.close()
    return { postgres: 'ok', event_store: events.kind, applied: postgres }
  }
  if (group === 'dlq') {
    if (action !== 'list' && action !== 'replay') throw new UsageError('dlq needs list or replay')
    return dlqCommand(action, { file: values.file }, config, {
      store: async () => {
        const store = createEventStore(config)
        await store.init()
        return store
      },
      learner: () => openLearnerReplay(config),
    })
  }
  // without a running service, import runs one in this process (no listener) and drains it at the end
  const startService = async () => (await import('./services')).startServices(config, createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL))
  const imported = await importCommand(positionals, values, config, startService, (m) => new UsageError(m))
  if (imported !== null) {
    if (imported.refused > 0) throw new ReportedFailure(imported)
    return imported
  }
  const backupResult = await backupCommand(group, values, config, (m) => new UsageError(m))
  if (backupResult !== null) return backupResult
  const moveResult = await moveCommand(group, values, config, (m) => new UsageError(m))
  if (moveResult !== null) return moveResult
  throw new UsageError(`unknown command "${positionals.join(' ')}"\n${USAGE}`)
}

if (import.meta.main) {
  let config: Config
  try {
    config = loadConfig()
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`)
    process.exit(error instanceof ConfigError ? 2 : 1)
  }
  const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL)
  try {
    print(await runCli(process.argv.slice(2), config))
    process.exit(0)
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${error.message}\n`)
      process.exit(0)
    }
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`)
      process.exit(64)
    }
    if (error instanceof ReportedFailure) {
      print(error.report)
      process.exit(1)
    }
    log.error({ err: error }, 'command failed')
    process.stderr.write(`error: ${(error as Error).message}\n`)
    exitAfterFlush(log, 1)
  }
}
