// The admin CLI: `npm run cli -- <command>`. The result is one JSON object on stdout; logs go to stderr.
// Works with or without a running server: on the embedded store it joins the server's database socket.
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, type Config } from './config'
import { migratePostgres } from './db/migrate'
import { openDatabase, type Database } from './db/postgres'
import { createLogger } from './log'
import { createPersonalKey, createProject } from './projects/repository'
import { createEventStore } from './events/factory'
import { dlqCommand } from './pipeline/dlq-cli'
import { openLearnerReplay } from './people/learner-replay'

const USAGE = `usage: npm run cli -- <command>
  project create --name NAME [--organization UUID]   create a project; prints {"id", "api_token"}
  personal-key create --label LABEL [--email EMAIL]   create a personal API key; prints {"key"} (shown only once)
  migrate                                             apply Postgres and event-store migrations
  dlq list                                            dead-lettered events, by file and reason
  dlq replay [--file NAME]                            hand dead-lettered events back to the event store or the learner`

export class UsageError extends Error {}

function print(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

async function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
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

/** `--help`: the usage on stdout, exit 0. */
export class HelpRequested extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

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
        file: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
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
    if (organizationId !== undefined && !UUID.test(organizationId)) throw new UsageError(`--organization must be an organization id (a UUID), not ${JSON.stringify(organizationId)}`)
    return withDatabase(config, (db) =>
      createProject(db.sql, { name: values.name!, organizationId }).catch((error: { code?: string }) => {
        if (error?.code === '23503') throw new UsageError(`no organization has the id ${organizationId}`)
        throw error
      }),
    )
  }
  if (group === 'personal-key' && action === 'create') {
    if (!values.label) throw new UsageError('personal-key create needs --label LABEL')
    return withDatabase(config, (db) => createPersonalKey(db.sql, { label: values.label!, email: values.email }))
  }
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
    log.error({ err: error }, 'command failed')
    process.stderr.write(`error: ${(error as Error).message}\n`)
    setTimeout(() => process.exit(1), 50)
  }
}
