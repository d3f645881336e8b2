// Hostile input on every public endpoint, against the server running as a process: no 500, no crash, memory
// bounded, and it still serves afterwards. Reduced in `npm test`; FUZZ_FULL=1 (npm run chaos) runs more.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { freshEnv, PROJECT_KEY } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'

const FULL = process.env.FUZZ_FULL === '1' || process.env.CHAOS_FULL === '1'
const RUNS = FULL ? 2000 : 150
/** the cap we promise under these inputs, on the embedded stores (PGlite alone is ~220 MB) */
const RSS_CAP_MB = 1024

const CAPTURE = ['/capture/', '/batch/', '/e/', '/i/v0/e/', '/track/', '/engage/', '/s/']
const DECIDE = ['/decide/?v=1', '/decide/?v=2', '/decide/?v=3', '/decide/?v=4', '/decide/?v=2&v=1.19.0', '/flags/?v=2', '/flags/?v=2&config=true']
const ALL = [...CAPTURE, ...DECIDE]

let service: ServiceProcess
let peakRssMb = 0
let sampler: ReturnType<typeof setInterval>

function rssMb(): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${service.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

beforeAll(async () => {
  const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
  service = await spawnService({ ...env, LOG_LEVEL: 'error', MAX_BODY_BYTES: String(20 * 1024 * 1024) })
  sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb())), 50)
})

afterAll(async () => {
  clearInterval(sampler)
  await service?.stop()
})

const failures: string[] = []

/** Send, and record anything that is not a clear answer below 500. */
async function send(path: string, init: RequestInit, label: string): Promise<number> {
  let status: number
  try {
    const r = await fetch(`${service.url}${path}`, { ...init, signal: AbortSignal.timeout(30_000) })
    status = r.status
    const body = await r.text()
    if (status >= 500 && !(status === 503 && body.includes('"type":"server_error"'))) failures.push(`${label} ${path} → ${status} ${body.slice(0, 200)}`)
    if (status >= 400 && status !== 503 && status !== 413 && !body.startsWith('{"type":')) failures.push(`${label} ${path} → ${status} without the error shape: ${body.slice(0, 100)}`)
  } catch (error) {
    failures.push(`${label} ${path} → connection failed: ${(error as Error).message}`)
    status = 0
  }
  return status
}

const pathArb = fc.constantFrom(...ALL)
const contentTypeArb = fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', null, 'multipart/form-data; boundary=x', 'application/octet-stream')
const queryArb = fc.constantFrom('', 'compression=gzip-js', 'compression=lz64', 'compression=base64', 'compression=br', '_=1700000000000', '_=abc', 'ver=1.2.3&ip=1', 'beacon=1')

/** Text that is hard to live with: lone surrogates, NUL, long runs. */
const nastyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.constantFrom('\0', '\uD800', 'a\uDC00b', '__proto__', 'constructor', '$set', "' OR 1=1 --", '%_', '\\', '🦔'.repeat(50), ''),
)
const scalar = fc.oneof(nastyString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null))
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 4 }), fc.dictionary(nastyString, scalar, { maxKeys: 4 }))

/** An event with every field present, absent, or of the wrong type, in turn. */
const eventArb = fc.record(
  {
    event: fc.oneof(nastyString, value),
    distinct_id: fc.oneof(nastyString, value),
    $distinct_id: value,
    properties: fc.oneof(fc.dictionary(nastyString, value, { maxKeys: 6 }), value),
    timestamp: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), value),
    offset: value,
    uuid: fc.oneof(fc.uuid(), value),
    $set: value,
    $set_once: value,
    api_key: fc.oneof(fc.constant(PROJECT_KEY), nastyString),
    token: fc.oneof(fc.constant(PROJECT_KEY), value),
    __proto__: fc.dictionary(nastyString, value, { maxKeys: 2 }),
    constructor: value,
    person_properties: value,
    groups: value,
    group_properties: value,
  },
  { requiredKeys: [] },
)

const payloadArb = fc.oneof(
  eventArb,
  fc.array(eventArb, { maxLength: 5 }),
  fc.record({ api_key: fc.oneof(fc.constant(PROJECT_KEY), value), batch: fc.oneof(fc.array(eventArb, { maxLength: 5 }), value), sent_at: value }, { requiredKeys: [] }),
  value,
)

function encode(payload: unknown, how: string): Uint8Array | string {
  const json = JSON.stringify(payload) ?? 'null'
  switch (how) {
    case 'gzip':
      return gzipSync(json)
    case 'gzip-truncated': {
      const g = gzipSync(json)
      return g.subarray(0, Math.max(2, g.length - 7))
    }
    case 'gzip-corrupt': {
      const g = Buffer.from(gzipSync(json))
      g[Math.min(g.length - 1, 12)] ^= 0xff
      return g
    }
    case 'lz64':
      return LZString.compressToBase64(json)
    case 'base64':
      return Buffer.from(json).toString('base64')
    case 'form':
      return `data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`
    default:
      return json
  }
}

describe('fuzzing every public endpoint', () => {
  test('random bytes', async () => {
    await fc.assert(
      fc.asyncProperty(pathArb, fc.uint8Array({ maxLength: 2048 }), contentTypeArb, queryArb, async (path, bytes, contentType, query) => {
        const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {}
        await send(`${path}${path.includes('?') ? '&' : '?'}${query}`, { method: 'POST', body: bytes, headers }, 'bytes')
      }),
      { numRuns: RUNS },
    )
    expect(failures).toEqual([])
  })

  test('structured payloads with every field missing or mistyped, in every encoding', async () => {
    await fc.assert(
      fc.asyncProperty(
        pathArb,
        payloadArb,
        fc.constantFrom('json', 'gzip', 'gzip-truncated', 'gzip-corrupt', 'lz64', 'base64', 'form'),
        contentTypeArb,
        async (path, payload, how, contentType) => {
          const body = encode(payload, how)
          const hint = how.startsWith('gzip') ? 'compression=gzip-js' : how === 'lz64' ? 'compression=lz64' : ''
          const headers: Record<string, string> = how === 'form' ? { 'content-type': 'application/x-www-form-urlencoded' } : contentType ? { 'content-type': contentType } : {}
          await send(`${path}${path.includes('?') ? '&' : '?'}${hint}`, { method: 'POST', body, headers }, how)
        },
      ),
      { numRuns: RUNS },
    )
    expect(failures).toEqual([])
  })

  test('GET with data= and OPTIONS on every path', async () => {
    await fc.assert(
      fc.asyncProperty(pathArb, payloadArb, async (path, payload) => {
        const data = encodeURIComponent(Buffer.from(JSON.stringify(payload) ?? '').toString('base64'))
        await send(`${path}${path.includes('?') ? '&' : '?'}data=${data}`, { method: 'GET' }, 'get')
        await send(path, { method: 'OPTIONS', headers: { origin: 'https://x.test', 'access-control-request-headers': 'content-type' } }, 'options')
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    )
    expect(failures).toEqual([])
  })

  test('the extremes: JSON nested 100 000 deep, 10 MB strings, gzip and lz64 bombs, a body over the cap', async () => {
    const deep = `{"api_key":"${PROJECT_KEY}","event":"deep","distinct_id":"d","properties":{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`
    const deepObject = `{"api_key":"${PROJECT_KEY}","event":"deep","distinct_id":"d","properties":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`
    const huge = JSON.stringify({ api_key: PROJECT_KEY, event: 'huge', distinct_id: 'h', properties: { s: 'x'.repeat(10 * 1024 * 1024) } })
    const gzipBomb = gzipSync(Buffer.alloc(400 * 1024 * 1024, 32))
    const lzBomb = LZString.compressToBase64('['.repeat(4_000_000))
    const decideDeep = `{"token":"${PROJECT_KEY}","distinct_id":"d","person_properties":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`
    for (const path of ALL) {
      await send(path, { method: 'POST', body: deep }, 'deep-array')
      await send(path, { method: 'POST', body: deepObject }, 'deep-object')
      await send(path, { method: 'POST', body: huge }, '10MB')
      await send(`${path}${path.includes('?') ? '&' : '?'}compression=gzip-js`, { method: 'POST', body: gzipBomb }, 'gzip-bomb')
      await send(`${path}${path.includes('?') ? '&' : '?'}compression=lz64`, { method: 'POST', body: lzBomb }, 'lz64-bomb')
    }
    for (const path of DECIDE) await send(path, { method: 'POST', body: decideDeep }, 'deep-person-properties')
    const over = await send('/batch/', { method: 'POST', body: 'x'.repeat(21 * 1024 * 1024) }, 'over-cap')
    expect(over).toBe(413)
    expect(failures).toEqual([])
  })

  test('the server still serves, and memory stayed bounded', async () => {
    const health = await fetch(`${service.url}/_health`)
    expect(health.status).toBe(200)
    const ok = await fetch(`${service.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'after fuzz', distinct_id: 'survivor' }) })
    expect(ok.status).toBe(200)
    expect(peakRssMb).toBeGreaterThan(0)
    expect(peakRssMb).toBeLessThan(RSS_CAP_MB)
    console.log(`fuzz: peak RSS ${Math.round(peakRssMb)} MB (cap ${RSS_CAP_MB} MB), ${RUNS} runs per property`)
  })
})
