// An analytics thread: runs the private API's reads of the event store (and the work of encoding their answers), so
// that the thread serving capture and /decide never does. Its own composition root (services.ts); the serving
// thread sends operations by name (operations.ts) and gets back their JSON, encoded, the buffer transferred.
import type { Config } from '../config'
import { ApiError, toErrorResponse } from '../http/errors'
import { reniceThisThread } from '../lib/renice'
import { TextAnswer } from '../http/offload'
import { createLogger } from '../log'
import { MetricsRecorder } from './metrics-relay'
import { ANALYTICS_OPERATIONS } from './operations'
import type { FromAnalytics, ToAnalytics } from './protocol'
import { startAnalyticsServices, type AnalyticsServices } from './services'

declare const self: Worker

const send = (message: FromAnalytics, transfer: ArrayBuffer[] = []) => self.postMessage(message, transfer)

/** What a request counted reaches the registry before its answer does (a scrape after the answer sees it). */
function sendMetrics(): void {
  const calls = recorder.take()
  if (calls) send({ type: 'metrics', calls })
}

const recorder = new MetricsRecorder()
const running = new Map<number, AbortController>()
let services: AnalyticsServices | undefined
let config: Config | undefined
let relay: ReturnType<typeof setInterval> | undefined
const encoder = new TextEncoder()

const deadlinePassed = () =>
  new ApiError(504, 'server_error', 'query_timeout', `The answer was not ready within QUERY_TIMEOUT_MS (${config!.QUERY_TIMEOUT_MS} ms, every statement of the request together): it was cancelled. Please retry, or narrow the query.`, null, {
    'retry-after': '5',
  })
/** smaller answers are sent as they are: compressing them saves less than it costs */
const GZIP_MIN_BYTES = 1024

async function start(given: Config): Promise<void> {
  config = given
  reniceThisThread(config.ANALYTICS_THREAD_NICE)
  const log = createLogger(config.LOG_LEVEL).child({ thread: 'analytics' })
  services = await startAnalyticsServices(config, log, recorder.metrics)
  relay = setInterval(sendMetrics, 200)
  self.addEventListener('message', (event: MessageEvent<ToAnalytics>) => {
    const m = event.data
    if (m.type === 'call') void run(m, log)
    else if (m.type === 'cancel') running.get(m.id)?.abort()
  })
  send({ type: 'ready' })
}

async function run({ id, op, args, deadline, gzip }: Extract<ToAnalytics, { type: 'call' }>, log: ReturnType<typeof createLogger>): Promise<void> {
  const controller = new AbortController()
  running.set(id, controller)
  // the work stops at the deadline (a kind running several statements shares it), and says why: a 504, not the
  // 499 of a client that left
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, Math.max(0, deadline - Date.now()))
  try {
    const operation = (ANALYTICS_OPERATIONS as Record<string, (s: AnalyticsServices, a: unknown, signal: AbortSignal) => unknown>)[op]
    if (!operation) throw new Error(`Unknown analytics operation ${op}`)
    const result = await operation(services!, args, controller.signal)
    const text = result instanceof TextAnswer ? result.text : JSON.stringify(result ?? null)
    // a string's length is at most its UTF-8 size: the check before encoding spares the copy of what is refused
    const max = config!.ANALYTICS_MAX_ANSWER_BYTES
    const bytes = text.length <= max ? encoder.encode(text) : null
    if (bytes === null || bytes.byteLength > max) {
      recorder.metrics.analyticsAnswersRefused.inc({ reason: 'too_large' })
      sendMetrics()
      send({ type: 'error', id, status: 413, body: { type: 'client_error', code: 'answer_too_large', detail: `The answer is larger than ${max} bytes (ANALYTICS_MAX_ANSWER_BYTES): narrow the query or page through it.`, attr: null }, headers: {} })
      return
    }
    // level 1: most of the size gone for little of the time (JSON of repeated keys and numbers)
    const answer = gzip && bytes.byteLength > GZIP_MIN_BYTES ? Bun.gzipSync(bytes, { level: 1 }) : bytes
    sendMetrics()
    const contentType = result instanceof TextAnswer ? result.contentType : undefined
    send({ type: 'answer', id, bytes: answer, gzip: answer !== bytes, contentType }, [answer.buffer as ArrayBuffer])
  } catch (error) {
    const { status, body, headers } = timedOut ? toErrorResponse('UNKNOWN', deadlinePassed()) : toErrorResponse('UNKNOWN', error)
    // the serving thread answers with the envelope; an unexpected failure's cause, with its stack, is logged here
    // where it is known (a refusal of ours, a 503 store_busy say, is an answer, not an error)
    if (status >= 500 && !(error instanceof ApiError) && !controller.signal.aborted) log.error({ err: error, op, status }, `analytics ${op} failed: ${(error as Error)?.message ?? String(error)}`)
    sendMetrics()
    send({ type: 'error', id, status, body, headers })
  } finally {
    clearTimeout(timer)
    running.delete(id)
  }
}

self.onmessage = async (event: MessageEvent<ToAnalytics>) => {
  const m = event.data
  if (m.type === 'init') {
    try {
      await start(m.config)
    } catch (error) {
      const e = error as Error
      send({ type: 'fatal', message: e?.message ?? String(error), stack: e?.stack })
    }
  } else if (m.type === 'close') {
    for (const controller of running.values()) controller.abort()
    clearInterval(relay)
    sendMetrics()
    await services?.close().catch(() => undefined)
    send({ type: 'closed' })
  }
}
