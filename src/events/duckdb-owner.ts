// The thread that owns the process's DuckDB instance (duckdb-database.ts explains why there is one). Started by
// duckdb-access.ts on the main thread with the file and its settings; every thread of the process (the main thread,
// the flush worker) then reaches it the same way: a hello on the file's channel, answered with a welcome, then
// requests on a channel of the caller's own, so that one caller's rows are never copied to another thread.
import { DuckDbDatabase, type DuckDbSettings, type MappingRow, type SqlValue, type TurnOptions } from './duckdb-database'
import { StatementRefused } from './duckdb-turns'
import type { StoredEvent } from './store'
import { clientChannelName, controlChannelName, type ControlMessage, type OwnerCommand, type OwnerEvent, type Request, type Answer } from './duckdb-protocol'
import { reniceThisThread } from '../lib/renice'

declare const self: Worker

const send = (message: OwnerEvent) => self.postMessage(message)

let db: DuckDbDatabase | undefined
let control: BroadcastChannel | undefined
const clients = new Map<string, BroadcastChannel>()

function perform(database: DuckDbDatabase, client: string, request: Request): Promise<unknown> | unknown {
  const args = request.args
  switch (request.op) {
    case 'all':
      return database.all(args[0] as string, args[1] as SqlValue[])
    case 'write':
      return database.write(args[0] as string, args[1] as SqlValue[])
    case 'insertEvents':
      return database.insertEvents(args[0] as StoredEvent[], args[1] as boolean)
    case 'upsertMapping':
      return database.upsertMapping(args[0] as MappingRow[])
    case 'stream':
      return database.stream(`${client}:${args[0]}`, args[1] as string, args[2] as SqlValue[], args[3] as number, (args[4] ?? {}) as TurnOptions)
    case 'interrupt':
      return database.interrupt(`${client}:${args[0]}`)
  }
}

/** The caller's own channel: opened at its first hello, kept until the owner closes. */
function serveClient(database: DuckDbDatabase, client: string): void {
  if (clients.has(client)) return
  const channel = new BroadcastChannel(clientChannelName(database.file, client))
  channel.onmessage = async (event) => {
    const request = event.data as Request
    let answer: Answer
    try {
      answer = { id: request.id, result: await perform(database, client, request) }
    } catch (error) {
      answer = { id: request.id, error: (error as Error)?.message ?? String(error) }
      if (error instanceof StatementRefused) answer.failure = error.failure
    }
    channel.postMessage(answer)
  }
  clients.set(client, channel)
}

async function open(file: string, settings: DuckDbSettings): Promise<void> {
  const database = await DuckDbDatabase.open(file, settings)
  db = database
  control = new BroadcastChannel(controlChannelName(file))
  control.onmessage = (event) => {
    const m = event.data as ControlMessage
    if (m.kind !== 'hello') return
    serveClient(database, m.from)
    control?.postMessage({ kind: 'welcome', to: m.from } satisfies ControlMessage)
  }
}

async function close(): Promise<void> {
  control?.close()
  for (const channel of clients.values()) channel.close()
  clients.clear()
  await db?.close()
}

self.onmessage = async (event: MessageEvent<OwnerCommand>) => {
  const command = event.data
  if (command.kind === 'open') {
    try {
      // its rows read into JavaScript are analytics work: under saturation capture and /decide come first
      reniceThisThread(command.settings.nice ?? 0)
      await open(command.file, command.settings)
      send({ kind: 'ready' })
    } catch (error) {
      send({ kind: 'failed', error: (error as Error)?.message ?? String(error) })
    }
  } else if (command.kind === 'close') {
    try {
      await close()
    } finally {
      // nothing left to listen for: the thread ends once DuckDB's last native work has completed
      self.onmessage = null
      send({ kind: 'closed' })
    }
  }
}
