// `import events FILE…`: PostHog's event export (JSON lines or CSV, gzip or not) read as a stream, each record
// checked, and batches handed to the process owning DATA_DIR through its import socket (control.ts): the running
// service, or, when none runs, a service this command starts in itself (no HTTP listener) and drains at the end.
// Either way the events take capture's path: the write-ahead log, the flush worker, the learner.
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Config } from '../config'
import { dataDirHolder } from '../db/data-dir-lock'
import { ImportClient, ImportRefused } from './control'
import { MAX_RECORD_BYTES, csvColumns, csvColumnsProblem, parseCsvRow, parseJsonLine, type CsvColumns, type ImportEvent, type Parsed, type RefusalReason } from './parse'
import { clearProgress, emptyCounts, fileIdentity, saveProgress, savedProgress, type FileCounts } from './progress'
import { fileBytes, formatOf, isGzip, splitRecords, type FileFormat } from './reader'

/** Events per batch, and the bytes of JSON past which a batch is sent earlier. */
const BATCH_EVENTS = 1000
const BATCH_BYTES = 4 * 1024 * 1024
/** Batches on their way at once: the service checks one against the store while it appends another. */
const BATCHES_IN_FLIGHT = 3
/** How long a refused batch (log full, project at its share) is retried before the import gives up. */
const RETRY_FOR_MS = 10 * 60_000
const EXAMPLES_KEPT = 10

export interface ImportOptions {
  files: string[]
  project?: string
  token?: string
  /** how long the end waits for the stores to hold everything (default 10 min) */
  finishTimeoutMs?: number
}

/** A running service in this process, for when none holds DATA_DIR. */
export type StartService = () => Promise<{ close(): Promise<void> }>

export interface FileSummary extends FileCounts {
  file: string
  format: FileFormat
  gzip: boolean
  resumed_after_record: number
  refused_examples: { record: number; reason: RefusalReason }[]
}

export interface ImportSummary {
  via: string
  project: number
  files: FileSummary[]
  read: number
  stored: number
  duplicates: number
  refused: number
  /** every stored event is in the event store and learned from (persons, definitions) */
  in_stores: boolean
  seconds: number
  events_per_second: number
}

/** The command's refusal of its input (bad option, missing file): a usage error. */
export class ImportUsage extends Error {}

function projectChoice(options: ImportOptions): { project?: number; token?: string } {
  if (options.project !== undefined && options.token !== undefined) throw new ImportUsage('import events takes --project ID or --token T, not both')
  if (options.project !== undefined) {
    const id = Number(options.project)
    if (!Number.isInteger(id) || id <= 0) throw new ImportUsage(`--project must be a project id, not ${JSON.stringify(options.project)}`)
    return { project: id }
  }
  return options.token !== undefined ? { token: options.token } : {}
}

export async function importEvents(options: ImportOptions, config: Config, startService: StartService, progressOut: (line: string) => void): Promise<ImportSummary> {
  if (options.files.length === 0) throw new ImportUsage('import events needs at least one FILE (JSON lines or CSV, gzip or not)')
  for (const f of options.files) {
    if (!existsSync(f) || !statSync(f).isFile()) throw new ImportUsage(`no such file: ${f}`)
  }
  const choice = projectChoice(options)
  const client = new ImportClient(config.DATA_DIR)
  const holder = await dataDirHolder(config.DATA_DIR)
  let own: { close(): Promise<void> } | null = null
  let via: string
  if (holder !== null) {
    if (!(await client.reachable())) throw new Error(`DATA_DIR is held by process ${holder}, which serves no import socket (an older phog?): stop it, or upgrade it`)
    via = `the running service (pid ${holder})`
  } else {
    own = await startService()
    via = 'this command (no service was running: it ran the pipeline itself)'
  }
  const started = performance.now()
  try {
    const project = await client.project(choice).catch((error) => {
      if (error instanceof ImportRefused && error.status === 400) throw new ImportUsage(error.message)
      throw error
    })
    const files: FileSummary[] = []
    for (const file of options.files) files.push(await importFile(file, project, client, config.DATA_DIR, progressOut))
    const inStores = await client.finish(options.finishTimeoutMs ?? 600_000)
    // everything acknowledged is in the log: the progress files have done their work
    for (const file of options.files) clearProgress(config.DATA_DIR, file)
    const seconds = (performance.now() - started) / 1000
    const total = (k: 'read' | 'stored' | 'duplicates') => files.reduce((s, f) => s + f[k], 0)
    const refused = files.reduce((s, f) => s + Object.values(f.refused).reduce((a, n) => a + (n ?? 0), 0), 0)
    const summary: ImportSummary = {
      via,
      project,
      files,
      read: total('read'),
      stored: total('stored'),
      duplicates: total('duplicates'),
      refused,
      in_stores: inStores,
      seconds: Math.round(seconds * 100) / 100,
      events_per_second: Math.round(total('stored') / Math.max(seconds, 0.001)),
    }
    return summary
  } finally {
    // the service this command ran drains its log into the stores before it closes
    if (own) await own.close()
  }
}

/** A batch being built: its events, and the records it accounts for. */
interface Pending {
  events: ImportEvent[]
  bytes: number
  read: number
  refused: Partial<Record<RefusalReason, number>>
  /** the last record (by index) this batch accounts for */
  upTo: number
}

const newPending = (upTo: number): Pending => ({ events: [], bytes: 0, read: 0, refused: {}, upTo })

async function importFile(file: string, project: number, client: ImportClient, dataDir: string, progressOut: (line: string) => void): Promise<FileSummary> {
  const identity = fileIdentity(file)
  const saved = savedProgress(dataDir, file, project)
  const counts = saved?.counts ?? emptyCounts()
  const skip = saved?.records_done ?? 0
  if (saved) progressOut(`import: ${file}: resuming after record ${skip} (${counts.stored} stored before)`)
  const gzip = await isGzip(file)
  const format = await detectFormat(file)
  const examples: FileSummary['refused_examples'] = []
  let columns: CsvColumns | null = null
  let pending = newPending(skip)
  /** batches sent and not yet answered, oldest first: progress is saved in this order only */
  const inFlight: Promise<{ stored: number; duplicates: number }>[] = []
  const waiting: Pending[] = []
  let lastReport = performance.now()
  const began = performance.now()
  const storedAtStart = counts.stored

  /** The oldest batch's answer: its counts and the progress past it, saved. */
  const settleOldest = async (): Promise<void> => {
    const answer = await inFlight.shift()!
    const batch = waiting.shift()!
    counts.read += batch.read
    counts.stored += answer.stored
    counts.duplicates += answer.duplicates
    for (const [reason, n] of Object.entries(batch.refused)) counts.refused[reason as RefusalReason] = (counts.refused[reason as RefusalReason] ?? 0) + (n ?? 0)
    saveProgress(dataDir, { ...identity, project, records_done: batch.upTo, counts })
    const now = performance.now()
    if (now - lastReport > 2000) {
      lastReport = now
      const rate = Math.round((counts.stored - storedAtStart) / ((now - began) / 1000))
      progressOut(`import: ${file}: ${counts.read} read, ${counts.stored} stored, ${counts.duplicates} duplicates, ${refusedTotal(counts)} refused (${rate} events/s)`)
    }
  }
  const flush = async () => {
    const batch = pending
    pending = newPending(batch.upTo)
    if (inFlight.length >= BATCHES_IN_FLIGHT) await settleOldest()
    const answer = batch.events.length > 0 ? sendWithRetries(client, project, batch.events) : Promise.resolve({ stored: 0, duplicates: 0 })
    // a failure surfaces when its turn to settle comes; until then it must not be reported unhandled
    answer.catch(() => undefined)
    inFlight.push(answer)
    waiting.push(batch)
  }

  for await (const record of splitRecords(fileBytes(file), MAX_RECORD_BYTES, format === 'csv')) {
    if (format === 'csv' && columns === null) {
      // the header: read again on a resume, it is never an event
      if (record.text === null) throw new ImportUsage(`${file}: the CSV header is longer than ${MAX_RECORD_BYTES} bytes`)
      columns = csvColumns(record.text)
      const problem = csvColumnsProblem(columns)
      if (problem) throw new ImportUsage(`${file}: ${problem}`)
      if (record.index > skip) pending.upTo = record.index
      continue
    }
    if (record.index <= skip) continue
    pending.upTo = record.index
    pending.read++
    const parsed: Parsed = record.text === null ? { refused: 'too_long' } : format === 'csv' ? parseCsvRow(record.text, columns!) : parseJsonLine(record.text)
    if ('refused' in parsed) {
      pending.refused[parsed.refused] = (pending.refused[parsed.refused] ?? 0) + 1
      if (examples.length < EXAMPLES_KEPT) examples.push({ record: record.index, reason: parsed.refused })
      continue
    }
    pending.events.push(parsed.event)
    pending.bytes += record.text!.length
    if (pending.events.length >= BATCH_EVENTS || pending.bytes >= BATCH_BYTES) await flush()
  }
  await flush()
  while (inFlight.length > 0) await settleOldest()
  progressOut(`import: ${file}: done: ${counts.read} read, ${counts.stored} stored, ${counts.duplicates} duplicates, ${refusedTotal(counts)} refused`)
  return { file: resolve(file), format, gzip, ...counts, resumed_after_record: skip, refused_examples: examples }
}

const refusedTotal = (c: FileCounts) => Object.values(c.refused).reduce((a, n) => a + (n ?? 0), 0)

async function sendWithRetries(client: ImportClient, project: number, events: ImportEvent[]) {
  const giveUpAt = Date.now() + RETRY_FOR_MS
  let wait = 250
  for (;;) {
    try {
      return await client.batch(project, events)
    } catch (error) {
      if (!(error instanceof ImportRefused && error.retryable) || Date.now() + wait > giveUpAt) throw error
      await Bun.sleep(wait)
      wait = Math.min(wait * 2, 5000)
    }
  }
}

/** JSON lines or CSV, from the first bytes of the (decompressed) file. */
async function detectFormat(file: string): Promise<FileFormat> {
  for await (const chunk of fileBytes(file)) {
    const text = chunk.toString('utf8', 0, Math.min(chunk.length, 4096)).replace(/^\uFEFF/, '')
    if (text.trim() === '') continue
    return formatOf(text)
  }
  return 'jsonl'
}

export const IMPORT_USAGE = `  import events FILE… [--project ID | --token T]     PostHog's event export (JSON lines or CSV, gzip or not) through
                                                      the capture pipeline; uuids the project holds are skipped;
                                                      resumes after an interruption; prints a summary (exit 1 when
                                                      lines were refused)`

/** null when `group` is not `import`. */
export async function importCommand(
  positionals: string[],
  values: { project?: string; token?: string },
  config: Config,
  startService: StartService,
  usage: (message: string) => Error,
): Promise<ImportSummary | null> {
  const [group, action, ...files] = positionals
  if (group !== 'import') return null
  if (action !== 'events') throw usage(`import needs "events" (import events FILE…)\n${IMPORT_USAGE}`)
  try {
    return await importEvents({ files, project: values.project, token: values.token }, config, startService, (line) => process.stderr.write(`${line}\n`))
  } catch (error) {
    if (error instanceof ImportUsage) throw usage(error.message)
    throw error
  }
}
