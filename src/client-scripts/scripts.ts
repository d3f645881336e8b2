// The scripts posthog-js loads lazily from its api host (/static/lazy-recorder.js, recorder.js, surveys.js,
// exception-autocapture.js, web-vitals.js, dead-clicks-autocapture.js, …) and the snippet's array.js, served from
// the posthog-js package this service depends on: no CDN, so recording and the other extensions start on an
// air-gapped install. A name is looked up in the list of files the package's dist/ holds (read once at boot); a
// path from the request is never joined to a directory. Each script is read and compressed (gzip, and brotli at a
// quality that costs milliseconds) once, on its first request, off the serving thread (zlib's async functions), and
// kept: the set is fixed and bounded by MAX_CACHED_BYTES.
import { readdirSync, readFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'

const gzipAsync = promisify(gzip)
const brotliAsync = promisify(brotliCompress)

/** What the cache may hold, every encoding counted (posthog-js 1.449's dist/*.js: 9 MB raw, ~5 MB compressed). */
export const MAX_CACHED_BYTES = 48 * 1024 * 1024
/** A file larger than this is not served (none of posthog-js's is near it). */
const MAX_SCRIPT_BYTES = 4 * 1024 * 1024
const SCRIPT_NAME = /^[a-z0-9][a-z0-9.-]{0,100}\.js$/

export interface Script {
  identity: Uint8Array
  gzip: Uint8Array
  br: Uint8Array
  etag: string
}

export class ClientScripts {
  /** file name → its path in the package, from the directory listing (nothing else is ever opened) */
  private readonly files = new Map<string, string>()
  private readonly loaded = new Map<string, Promise<Script | null>>()
  private cachedBytes = 0
  readonly version: string

  constructor(private readonly dist: string, version: string) {
    this.version = version
    for (const name of readdirSync(dist)) if (SCRIPT_NAME.test(name)) this.files.set(name, join(dist, name))
  }

  /** The installed posthog-js (absent: no scripts, every request a 404). */
  static fromPackage(): ClientScripts {
    try {
      const require = createRequire(import.meta.url)
      const root = dirname(require.resolve('posthog-js/package.json'))
      const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
      return new ClientScripts(join(root, 'dist'), version)
    } catch {
      return new ClientScripts('', '')
    }
  }

  names(): string[] {
    return [...this.files.keys()].sort()
  }

  has(name: string): boolean {
    return this.files.has(name)
  }

  /** The script with its encodings, or null when no such script is shipped. */
  get(name: string): Promise<Script | null> {
    const path = this.files.get(name)
    if (path === undefined) return Promise.resolve(null)
    let pending = this.loaded.get(name)
    if (pending === undefined) {
      pending = this.load(name, path)
      this.loaded.set(name, pending)
      // a failed read is tried again by the next request
      pending.catch(() => this.loaded.delete(name))
    }
    return pending
  }

  private async load(name: string, path: string): Promise<Script | null> {
    const identity = new Uint8Array(await Bun.file(path).arrayBuffer())
    if (identity.length > MAX_SCRIPT_BYTES) return null
    const [gzipped, br] = await Promise.all([
      gzipAsync(identity, { level: 9 }),
      brotliAsync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
    ])
    const script: Script = {
      identity,
      gzip: new Uint8Array(gzipped),
      br: new Uint8Array(br),
      etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`,
    }
    const size = identity.length + script.gzip.length + script.br.length
    // past the budget the script is still answered, but read and compressed again next time
    if (this.cachedBytes + size > MAX_CACHED_BYTES) this.loaded.delete(name)
    else this.cachedBytes += size
    return script
  }
}
