// Boot: config → stores → app → listen; graceful drain on SIGTERM/SIGINT.
import { createApp } from './app'
import { ConfigError, loadConfig, type Config } from './config'
import { serverBodyLimit } from './http/body'
import { httpIdleTimeoutSeconds } from './analytics/threads'
import { createLogger, exitAfterFlush } from './log'
import { assertDataDirWritable, assertPortFree, describeBootFailure } from './ops/boot'
import { startServices } from './services'
import { watchEventLoopLag } from './ops/event-loop-lag'

let config: Config
try {
  config = loadConfig()
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`)
    process.exit(2)
  }
  throw error
}

const log = createLogger(config.LOG_LEVEL)
const services = await (async () => {
  // checked before anything is changed (migrations, the log), so a failed boot leaves nothing half-done
  assertDataDirWritable(config)
  await assertPortFree(config)
  return startServices(config, log)
})().catch((error) => {
  // the last line says, in words, what failed and what to change; the error (stack, cause) is on it too
  log.fatal({ err: error }, `could not start: ${describeBootFailure(error, config)}`)
  exitAfterFlush(log, 1)
  return undefined
})
if (!services) await new Promise(() => undefined)

const app = createApp(services!)
watchEventLoopLag(services!.metrics)
app.listen({
  hostname: config.HOST,
  port: config.PORT,
  reusePort: config.REUSE_PORT,
  maxRequestBodySize: serverBodyLimit(Math.max(config.MAX_BODY_BYTES, config.MAX_RECORDING_BODY_BYTES)),
  // past the analytics deadline: a slow private request gets its 504, not a closed connection
  idleTimeout: httpIdleTimeoutSeconds(config),
})
log.info({ host: config.HOST, port: app.server?.port }, 'listening')

let stopping = false
async function shutdown(signal: string): Promise<void> {
  if (stopping) return
  stopping = true
  log.info({ signal, graceMs: config.SHUTDOWN_GRACE_MS }, 'draining')
  services!.lifecycle.draining = true
  // /_ready now answers 503: give the load balancer time to notice before the listener closes
  if (config.SHUTDOWN_GRACE_MS > 0) await Bun.sleep(config.SHUTDOWN_GRACE_MS)
  const deadline = setTimeout(() => {
    log.error('drain timed out; exiting')
    process.exit(1)
  }, config.SHUTDOWN_TIMEOUT_MS)
  try {
    await app.stop(false)
    await services!.close()
    log.info('stopped')
  } catch (error) {
    log.error({ err: error }, 'error during shutdown')
  } finally {
    clearTimeout(deadline)
    exitAfterFlush(log, 0)
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
