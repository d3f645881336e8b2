// A throwaway, real ZooKeeper for tests (what a ClickHouse cluster coordinates its replicas and ON CLUSTER DDL
// through): Debian's `zookeeper` package run standalone by `java`, on a free 127.0.0.1 port, with its data and log
// in a temp dir. Ready when it answers the `srvr` four-letter word with its mode — `ruok` answers "imok" before
// the server accepts sessions.
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import {
  STARTUP_TIMEOUT_MS,
  ServerProcess,
  ensureBinary,
  findBinary,
  logTails,
  makeTempDir,
  reservePort,
  sleep,
  track,
  untrack,
  type TrackedServer,
} from './server-process'

export interface ZooKeeperServer {
  port: number
  /** The `srvr` answer ("Mode: standalone" once it serves). */
  status(): Promise<string>
  /** Stops it and removes its temp dir. Idempotent. */
  destroy(): Promise<void>
}

const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar'

function findZooKeeper(): { java: string; jar: string } | undefined {
  const java = findBinary('java', ['/usr/bin'])
  return java && fs.existsSync(ZOOKEEPER_JAR) ? { java, jar: ZOOKEEPER_JAR } : undefined
}

/** Send a four-letter word to the client port and return the answer ('' when it does not answer). */
export function fourLetterWord(port: number, word: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    let text = ''
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.end(word))
    socket.setTimeout(timeoutMs, () => socket.destroy())
    socket.on('data', (chunk) => (text += chunk.toString('utf8')))
    socket.on('close', () => resolve(text))
    socket.on('error', () => undefined)
  })
}

class ZkServer implements ZooKeeperServer, TrackedServer {
  readonly ports: number[]
  readonly emergencySignal = 'SIGKILL' as const
  readonly pidFile: string
  watchdog?: TrackedServer['watchdog']
  private proc?: ServerProcess
  private destroying?: Promise<void>

  constructor(
    readonly dir: string,
    readonly port: number,
  ) {
    this.ports = [port]
    this.pidFile = path.join(dir, 'server.pid')
  }

  pid(): number | undefined {
    return this.proc?.running ? this.proc.pid : undefined
  }

  status(): Promise<string> {
    return fourLetterWord(this.port, 'srvr')
  }

  async start(bin: { java: string; jar: string }): Promise<void> {
    const config = path.join(this.dir, 'zoo.cfg')
    fs.mkdirSync(path.join(this.dir, 'data'), { recursive: true })
    fs.writeFileSync(
      config,
      [
        'tickTime=500',
        `dataDir=${path.join(this.dir, 'data')}`,
        `clientPort=${this.port}`,
        'clientPortAddress=127.0.0.1',
        'admin.enableServer=false',
        '4lw.commands.whitelist=srvr,stat',
        'maxClientCnxns=0',
        // sessions of killed servers expire quickly, so a restarted replica gets its ephemeral nodes back
        'minSessionTimeout=1000',
        'maxSessionTimeout=10000',
        '',
      ].join('\n'),
    )
    const log = path.join(this.dir, 'zookeeper.log')
    this.proc = new ServerProcess(
      bin.java,
      ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-cp', bin.jar, 'org.apache.zookeeper.server.ZooKeeperServerMain', config],
      { cwd: this.dir, logFile: log, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: this.dir, LANG: 'C' }, pidFile: this.pidFile },
    )
    const deadline = Date.now() + STARTUP_TIMEOUT_MS
    while (Date.now() < deadline) {
      if (!this.proc.running) throw new Error(`ZooKeeper exited during startup\n${logTails([log])}`)
      if (/^Mode: /m.test(await this.status())) return
      await sleep(50)
    }
    throw new Error(`ZooKeeper did not serve on 127.0.0.1:${this.port} within ${STARTUP_TIMEOUT_MS} ms\n${logTails([log])}`)
  }

  destroy(): Promise<void> {
    this.destroying ??= (async () => {
      await this.proc?.terminate('SIGKILL', 10_000)
      fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 })
      untrack(this)
    })()
    return this.destroying
  }
}

export async function startZooKeeper(): Promise<ZooKeeperServer> {
  const bin = await ensureBinary('ZooKeeper', findZooKeeper, ['zookeeper', 'default-jre-headless'])
  const server = new ZkServer(makeTempDir('phog-zk-'), await reservePort())
  track(server, server.pidFile)
  try {
    await server.start(bin)
  } catch (error) {
    await server.destroy()
    throw error
  }
  return server
}
