// posthog-node, unmodified, against the server started as a user would: 4.10.2 (the last on /decide/?v=3),
// 4.11.7 (/decide/?v=4) and the newest 5.x (/flags/?v=2).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PostHog as PostHog5 } from 'posthog-node'
import { PostHog as PostHog4117 } from 'posthog-node-4117'
import { PostHog as PostHog4102 } from 'posthog-node-4102'
import { PERSONAL_KEY, PROJECT_KEY, startService, type E2EService } from './service'

type Client = InstanceType<typeof PostHog5>
const VERSIONS: [string, new (key: string, options: Record<string, unknown>) => Client][] = [
  ['4.10.2', PostHog4102 as never],
  ['4.11.7', PostHog4117 as never],
  ['5.x', PostHog5 as never],
]
/** where each version asks for flags */
const FLAGS_ENDPOINT: Record<string, string> = { '4.10.2': '/decide/?v=3', '4.11.7': '/decide/?v=4', '5.x': '/flags/?v=2' }

let service: E2EService
beforeAll(async () => {
  service = await startService()
})
afterAll(async () => {
  await service?.stop()
})

interface RequestLog {
  url: string
  /** "METHOD /path?query" of every request the SDK sent, in order */
  seen: string[]
  /** the status the service answered each of them, in the same order */
  statuses: number[]
  stop(): void
}

/** A pass-through proxy in front of the service that writes down every request line it forwards. */
function recordingProxy(): RequestLog {
  const seen: string[] = []
  const statuses: number[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const index = seen.push(`${request.method} ${url.pathname}${url.search}`) - 1
      const headers = new Headers(request.headers)
      headers.delete('host')
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
      const r = await fetch(`${service.url}${url.pathname}${url.search}`, { method: request.method, headers, body })
      statuses[index] = r.status
      const out = new Headers(r.headers)
      out.delete('content-encoding')
      out.delete('content-length')
      return new Response(await r.arrayBuffer(), { status: r.status, headers: out })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, seen, statuses, stop: () => void server.stop(true) }
}

/** The service's own count of answered requests by route (http_requests_total, summed over statuses). */
async function servedByRoute(route: string, method = 'POST'): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text()
  let n = 0
  for (const m of text.matchAll(/^http_requests_total\{([^}]*)\} ([0-9.e+-]+)$/gm)) {
    if (m[1].includes(`route="${route}"`) && m[1].includes(`method="${method}"`)) n += Number(m[2])
  }
  return n
}

/** capture_requests_rejected_total{code="event_too_big"}: requests the service refused for an event over 1 MiB. */
async function tooBigRefusals(): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text()
  return Number(/^capture_requests_rejected_total\{code="event_too_big"\} (\d+)/m.exec(text)?.[1] ?? 0)
}

async function person(distinctId: string, until: (p: any) => boolean = () => true, ms = 15_000) {
  const deadline = Date.now() + ms
  let found: any
  while (Date.now() < deadline) {
    found = (await service.api(`/api/projects/1/persons/?distinct_id=${encodeURIComponent(distinctId)}`)).body.results[0]
    if (found && until(found)) return found
    await Bun.sleep(100)
  }
  return found
}

for (const [version, PostHog] of VERSIONS) {
  describe(`posthog-node ${version}`, () => {
    const tag = version.replace(/\W/g, '')
    const user = `node-user-${tag}`

    test('capture, identify, alias and groupIdentify are sent to /batch/ by flush(), and stored before shutdown()', async () => {
      const log = recordingProxy()
      // no automatic flush: nothing leaves the client until flush() is called
      const client = new PostHog(PROJECT_KEY, { host: log.url, flushAt: 100, flushInterval: 600_000 })
      let sentByFlush = -1
      try {
        client.capture({ distinctId: `anon-${tag}`, event: 'viewed pricing', properties: { plan: 'team', seats: 12, nested: { a: [1, 2] } } })
        client.identify({ distinctId: user, properties: { email: `${tag}@example.com`, name: 'Ada' } })
        client.alias({ distinctId: user, alias: `alias-${tag}` })
        client.groupIdentify({ groupType: 'company', groupKey: `acme-${tag}`, properties: { name: 'Acme', employees: 40 } })
        client.capture({ distinctId: user, event: 'created project', groups: { company: `acme-${tag}` } })
        await Bun.sleep(300)
        expect(log.seen).toEqual([])
        await client.flush()
        expect(log.seen.length).toBeGreaterThan(0)
        expect(new Set(log.seen)).toEqual(new Set(['POST /batch/']))
        // stored after flush(), while the client is still open
        expect(await service.events(`distinct_id=anon-${tag}`, 1)).toHaveLength(1)
        expect(await service.events(`distinct_id=${user}`, 3)).toHaveLength(3)
        sentByFlush = log.seen.length
      } finally {
        await client.shutdown()
        log.stop()
      }
      // flush() sent everything: shutdown() had nothing left to send
      expect(log.seen.length).toBe(sentByFlush)

      const viewed = await service.events(`distinct_id=anon-${tag}`, 1)
      expect(viewed).toHaveLength(1)
      expect(viewed[0]).toMatchObject({ event: 'viewed pricing', distinct_id: `anon-${tag}` })
      expect(viewed[0].properties).toMatchObject({ plan: 'team', seats: 12, nested: { a: [1, 2] }, $lib: 'posthog-node' })
      expect(viewed[0].uuid).toMatch(/^[0-9a-f-]{36}$/)

      const own = await service.events(`distinct_id=${user}`, 3)
      const byName = new Map(own.map((e) => [e.event, e]))
      expect([...byName.keys()].sort()).toEqual(['$create_alias', '$identify', 'created project'])
      expect(byName.get('$identify').properties.$set).toMatchObject({ email: `${tag}@example.com`, name: 'Ada' })
      expect(byName.get('$create_alias').properties.alias).toBe(`alias-${tag}`)
      expect(byName.get('created project').properties.$groups).toEqual({ company: `acme-${tag}` })

      const groupIdentify = await service.event('event=$groupidentify', (e) => e.properties.$group_key === `acme-${tag}`)
      expect(groupIdentify.properties).toMatchObject({ $group_type: 'company', $group_set: { name: 'Acme', employees: 40 } })

      // the persons API shows what identify and alias did
      const p = await person(user, (x) => x.distinct_ids.includes(`alias-${tag}`))
      expect(p.distinct_ids).toEqual([`alias-${tag}`, user].sort())
      expect(p.properties).toMatchObject({ email: `${tag}@example.com`, name: 'Ada' })
    })

    test('an event over 1 MiB: the batch holding it is answered 413 event_too_big, and nothing the client was told was refused is stored', async () => {
      const log = recordingProxy()
      // 4.x retries any HTTP error fetchRetryCount times, then drops the batch; 5.x halves a batch answered 413
      // and sends the halves, dropping an event refused alone
      const client = new PostHog(PROJECT_KEY, { host: log.url, flushAt: 100, flushInterval: 600_000, fetchRetryCount: 2, fetchRetryDelay: 10 })
      const blob = Buffer.from(crypto.getRandomValues(new Uint8Array(800 * 1024))).toString('base64') // 1.07 MB, incompressible
      const id = `big-${tag}`
      const refusalsBefore = await tooBigRefusals()
      client.on('error', () => undefined)
      try {
        client.capture({ distinctId: id, event: 'small before' })
        client.capture({ distinctId: id, event: 'too big', properties: { blob } })
        client.capture({ distinctId: id, event: 'small after' })
        // 5.x rejects the flush that met the lone refused event, leaving the rest queued for the next one
        for (let i = 0; i < 3; i++) await client.flush().catch(() => undefined)
        client.capture({ distinctId: id, event: 'marker' })
        await client.flush()
      } finally {
        await client.shutdown()
        log.stop()
      }
      const refused = log.statuses.filter((s) => s === 413).length
      const stored = (await service.events(`distinct_id=${id}`, version === '5.x' ? 3 : 1)).map((e) => e.event).sort()
      if (version === '5.x') {
        // the batch of three, then the lone big event: refused twice; the small ones sent again in halves and kept
        expect(refused).toBe(2)
        expect(stored).toEqual(['marker', 'small after', 'small before'])
      } else {
        // the batch refused on each of its 1 + 2 tries, then dropped whole by the client: none of it stored
        expect(refused).toBe(3)
        expect(stored).toEqual(['marker'])
      }
      // the service counted each refusal under its code
      expect((await tooBigRefusals()) - refusalsBefore).toBe(refused)
      // every request was answered: 413 for a refused one, 200 otherwise, never retried without end
      expect(log.statuses.every((s) => s === 200 || s === 413)).toBe(true)
      expect(log.seen.length).toBeLessThanOrEqual(6)
      expect(await service.events(`distinct_id=${id}&event=too+big`, 1, 500)).toEqual([])
    })
  })
}

// ---------------------------------------------------------------------------------------------------
// flags: created through the REST API, read through each SDK version

const FLAGS = [
  { key: 'e2e-on', filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"banner":"hello"}' } } },
  { key: 'e2e-half', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } },
  {
    key: 'e2e-multi',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 30 }, { key: 'other', rollout_percentage: 20 }] },
      payloads: { control: '{"color":"grey"}', test: '{"color":"blue"}', other: '42' },
    },
  },
  { key: 'e2e-pro-plan', filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } },
  { key: 'e2e-big-teams', filters: { groups: [{ properties: [{ key: 'seats', value: '10', operator: 'gt', type: 'person' }], rollout_percentage: 80 }] } },
  { key: 'e2e-example-emails', filters: { groups: [{ properties: [{ key: 'email', value: 'example.com', operator: 'icontains', type: 'person' }], rollout_percentage: 100 }] } },
  { key: 'e2e-inactive', active: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
]

describe('feature flags through the SDKs', () => {
  beforeAll(async () => {
    for (const flag of FLAGS) {
      const r = await service.api('/api/projects/1/feature_flags/', { method: 'POST', json: flag })
      expect(r.status).toBe(201)
    }
    const group = await service.api('/api/projects/1/feature_flags/', {
      method: 'POST',
      json: { key: 'e2e-company', filters: { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '"group payload"' } } },
    })
    expect(group.status).toBe(201)
  })

  /** What /decide v4 says, the reference the SDKs must agree with. */
  async function decide(distinctId: string, body: Record<string, unknown> = {}) {
    const r = await fetch(`${service.url}/decide/?v=4`, { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: distinctId, ...body }) })
    return ((await r.json()) as { flags: Record<string, { enabled: boolean; variant: string | null }> }).flags
  }

  for (const [version, PostHog] of VERSIONS) {
    test(`posthog-node ${version}: getFeatureFlag, isFeatureEnabled, getAllFlags and payloads say what the flags say`, async () => {
      const client = new PostHog(PROJECT_KEY, { host: service.url, flushAt: 1, flushInterval: 50 })
      try {
        const id = `flag-user-${version}`
        const person = { plan: 'pro', seats: 25, email: 'ada@example.com' }
        const reference = await decide(id, { person_properties: person })
        const expected = (key: string) => reference[key].variant ?? reference[key].enabled
        expect(await client.getFeatureFlag('e2e-on', id)).toBe(true)
        expect(await client.isFeatureEnabled('e2e-on', id)).toBe(true)
        expect(await client.getFeatureFlag('e2e-multi', id)).toBe(expected('e2e-multi'))
        expect(['control', 'test', 'other']).toContain((await client.getFeatureFlag('e2e-multi', id)) as string)
        expect(await client.getFeatureFlag('e2e-half', id)).toBe(expected('e2e-half'))
        expect(await client.getFeatureFlag('e2e-pro-plan', id, { personProperties: person })).toBe(true)
        expect(await client.getFeatureFlag('e2e-pro-plan', id, { personProperties: { plan: 'free' } })).toBe(false)
        // inactive flags are left out of the answer; 4.10 reads a missing flag as false, 4.11.1 and later as undefined
        expect(await client.getFeatureFlag('e2e-inactive', id)).toBe(version === '4.10.2' ? false : undefined)
        expect(await client.getFeatureFlagPayload('e2e-on', id, true)).toEqual({ banner: 'hello' })
        const variant = (await client.getFeatureFlag('e2e-multi', id)) as string
        expect(await client.getFeatureFlagPayload('e2e-multi', id, variant)).toEqual({ control: { color: 'grey' }, test: { color: 'blue' }, other: 42 }[variant])
        expect(await client.getFeatureFlag('e2e-company', id, { groups: { company: 'acme-4102' } })).toBe(true)
        const all = await client.getAllFlags(id, { personProperties: person })
        for (const key of ['e2e-on', 'e2e-half', 'e2e-multi', 'e2e-pro-plan', 'e2e-big-teams', 'e2e-example-emails']) expect(all[key]).toBe(expected(key))
        expect('e2e-inactive' in all).toBe(false)
      } finally {
        await client.shutdown()
      }
    })

    test(`posthog-node ${version} asks ${FLAGS_ENDPOINT[version]} for flags, and nothing else`, async () => {
      const log = recordingProxy()
      const route = FLAGS_ENDPOINT[version].startsWith('/flags') ? '/flags' : '/decide'
      const other = route === '/flags' ? '/decide' : '/flags'
      const before = { route: await servedByRoute(route), other: await servedByRoute(other) }
      const client = new PostHog(PROJECT_KEY, { host: log.url, flushAt: 1000, flushInterval: 600_000 })
      try {
        const id = `endpoint-user-${version}`
        expect(await client.getFeatureFlag('e2e-on', id)).toBe(true)
        expect(await client.isFeatureEnabled('e2e-on', id)).toBe(true)
        expect((await client.getAllFlags(id))['e2e-on']).toBe(true)
        expect(await client.getFeatureFlagPayload('e2e-on', id, true)).toEqual({ banner: 'hello' })
      } finally {
        await client.shutdown()
        log.stop()
      }
      const flagCalls = log.seen.filter((line) => /^\w+ \/(decide|flags)\//.test(line))
      expect(flagCalls.length).toBeGreaterThanOrEqual(3)
      expect(new Set(flagCalls)).toEqual(new Set([`POST ${FLAGS_ENDPOINT[version]}`]))
      // and the service counted them on that route, none on the other
      expect((await servedByRoute(route)) - before.route).toBe(flagCalls.length)
      expect((await servedByRoute(other)) - before.other).toBe(0)
      // the rest is the $feature_flag_called events, sent to /batch/ at shutdown
      expect(log.seen.filter((line) => !flagCalls.includes(line)).every((line) => line === 'POST /batch/')).toBe(true)
    })

    test(`posthog-node ${version}: local evaluation agrees with remote evaluation for 500 distinct ids`, async () => {
      const local = new PostHog(PROJECT_KEY, { host: service.url, personalApiKey: PERSONAL_KEY, featureFlagsPollingInterval: 60_000, flushAt: 1000 })
      const remote = new PostHog(PROJECT_KEY, { host: service.url, flushAt: 1000 })
      try {
        await (local as unknown as { reloadFeatureFlags(): Promise<void> }).reloadFeatureFlags()
        const keys = ['e2e-on', 'e2e-half', 'e2e-multi', 'e2e-pro-plan', 'e2e-big-teams', 'e2e-example-emails', 'e2e-company']
        const disagreements: string[] = []
        for (let i = 0; i < 500; i++) {
          const id = `local-${version}-${i}`
          const personProperties = { plan: i % 3 ? 'pro' : 'free', seats: i % 40, email: i % 2 ? `u${i}@example.com` : `u${i}@other.org` }
          const options = { personProperties, groups: { company: `c${i % 7}` }, groupProperties: { company: {} } }
          const locally = await local.getAllFlags(id, { ...options, onlyEvaluateLocally: true })
          const remotely = await remote.getAllFlags(id, options)
          for (const key of keys) if (locally[key] !== remotely[key]) disagreements.push(`${id} ${key}: local ${locally[key]} remote ${remotely[key]}`)
        }
        expect(disagreements).toEqual([])
      } finally {
        await Promise.all([local.shutdown(), remote.shutdown()])
      }
    })
  }
})
