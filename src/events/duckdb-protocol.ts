// What the DuckDB owner thread (duckdb-owner.ts) and its callers (duckdb-access.ts) say to each other.
import type { DuckDbSettings } from './duckdb-database'
import type { StatementFailure } from './duckdb-turns'

/** From the main thread to the owner thread it started. */
export type OwnerCommand = { kind: 'open'; file: string; settings: DuckDbSettings } | { kind: 'close' }
/** From the owner thread to the main thread. */
export type OwnerEvent = { kind: 'ready' } | { kind: 'failed'; error: string } | { kind: 'closed' }

/** On the file's channel: a caller says hello (again, until it is welcomed); the owner then serves its channel. */
export type ControlMessage = { kind: 'hello'; from: string } | { kind: 'welcome'; to: string }

export type Operation = 'all' | 'write' | 'insertEvents' | 'upsertMapping' | 'stream' | 'interrupt'
/** On a caller's own channel. */
export interface Request {
  id: number
  op: Operation
  args: unknown[]
}
/** `failure`: why the store refused or failed the statement, beside its message (duckdb-turns.ts) */
export type Answer = { id: number; result?: unknown; error?: string; failure?: StatementFailure }

export const controlChannelName = (file: string) => `phog-duckdb:${file}`
export const clientChannelName = (file: string, client: string) => `phog-duckdb:${file}:${client}`
