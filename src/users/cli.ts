// The CLI's console-password commands: passwords are read from stdin, never from argv.
import type { Sql } from 'postgres'
import { passwordProblem } from './rules'
import { PasswordError, setPassword } from './service'

export interface UserCommandOptions {
  email?: string
  'password-stdin'?: boolean
}

/** The password if it is acceptable, else the usage error naming what is wrong (never the password itself). */
export function checkedPasswordOr(usage: (message: string) => Error, password: string): string {
  const problem = passwordProblem(password)
  if (problem !== null) throw usage(problem)
  return password
}

/** The password given on stdin: its first line (a trailing newline from `echo` is not part of it). */
export async function readPasswordFromStdin(stdin: { text(): Promise<string> } = Bun.stdin): Promise<string> {
  const text = await stdin.text()
  return text.split(/\r?\n/)[0] ?? ''
}

/** Runs `user set-password`; null when the command is another (`user create` takes its password with checkedPasswordOr). */
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
  if (group === 'user' && action === 'set-password') {
    if (!values.email) throw usage('user set-password needs --email EMAIL')
    if (!values['password-stdin']) throw usage('user set-password needs --password-stdin (the password is read from stdin)')
    const password = await readPassword()
    return withSql((sql) => setPassword(sql, values.email!, password).catch(rethrow))
  }
  return null
}
