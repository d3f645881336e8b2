// The CLI's organization and user commands (console sign-in): passwords are read from stdin, never from argv.
import type { Sql } from 'postgres'
import { UUID_PATTERN } from '../http/fields'
import { createOrganization } from './repository'
import { createUser, PasswordError, setPassword } from './service'

export interface UserCommandOptions {
  name?: string
  email?: string
  organization?: string
  'password-stdin'?: boolean
}

/** The password given on stdin: its first line (a trailing newline from `echo` is not part of it). */
export async function readPasswordFromStdin(stdin: { text(): Promise<string> } = Bun.stdin): Promise<string> {
  const text = await stdin.text()
  return text.split(/\r?\n/)[0] ?? ''
}

/** Runs `organization create`, `user create`, `user set-password`; null when the command is not one of them. */
export async function userCommand(
  group: string,
  action: string | undefined,
  values: UserCommandOptions,
  withSql: <T>(fn: (sql: Sql) => Promise<T>) => Promise<T>,
  usage: (message: string) => Error,
  readPassword: () => Promise<string> = () => readPasswordFromStdin(),
): Promise<unknown | null> {
  const rethrow = (error: unknown) => {
    if (error instanceof PasswordError) throw usage(error.message)
    throw error
  }
  if (group === 'organization' && action === 'create') {
    if (!values.name) throw usage('organization create needs --name NAME')
    return withSql((sql) => createOrganization(sql, values.name!))
  }
  if (group === 'user' && action === 'create') {
    if (!values.email) throw usage('user create needs --email EMAIL')
    const organizationId = values.organization
    if (organizationId !== undefined && !UUID_PATTERN.test(organizationId)) throw usage(`--organization must be an organization id (a UUID), not ${JSON.stringify(organizationId)}`)
    const password = values['password-stdin'] ? await readPassword() : undefined
    return withSql((sql) =>
      createUser(sql, { email: values.email!, password, organizationId }).catch((error: { code?: string }) => {
        if (error?.code === '23503') throw usage(`no organization has the id ${organizationId}`)
        return rethrow(error)
      }),
    )
  }
  if (group === 'user' && action === 'set-password') {
    if (!values.email) throw usage('user set-password needs --email EMAIL')
    if (!values['password-stdin']) throw usage('user set-password needs --password-stdin (the password is read from stdin)')
    const password = await readPassword()
    return withSql((sql) => setPassword(sql, values.email!, password).catch(rethrow))
  }
  return null
}
