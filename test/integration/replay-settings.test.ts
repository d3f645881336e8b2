// Turning session replay on: the project's replay settings (PostHog's team fields) PATCHed on /api/projects/:id/,
// read back there, and answered to posthog-js as PostHog's `sessionRecording` object by the remote config, /flags
// and /decide; bad values refused with the member in `attr`; a change made by another process reaches this one's
// cache. On the embedded Postgres and a real one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { bumpFlagVersion } from '../../src/flags/repository'
import { BASE, json, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const SETTINGS = {
  session_recording_opt_in: true,
  session_recording_sample_rate: 0.5,
  session_recording_minimum_duration_milliseconds: 2000,
  session_recording_linked_flag: { id: 7, key: 'record-me', variant: 'test' },
  session_recording_network_payload_capture_config: { recordHeaders: true, recordBody: false },
  session_recording_masking_config: { maskAllInputs: true, blockSelector: '.secret' },
  session_recording_url_trigger_config: [{ url: '^https://shop\\.example/checkout', matching: 'regex' }],
  session_recording_url_blocklist_config: [{ url: '/admin', matching: 'regex' }],
  session_recording_event_trigger_config: ['signup_clicked'],
  session_recording_trigger_match_type_config: 'all',
  capture_console_log_opt_in: false,
  session_recording_retention_days: 90,
}

/** What posthog-js must read for SETTINGS, as PostHog's remote config builds it. */
const EXPECTED_RECORDING = {
  endpoint: '/s/',
  consoleLogRecordingEnabled: false,
  recorderVersion: 'v2',
  sampleRate: '0.50',
  minimumDurationMilliseconds: 2000,
  linkedFlag: { flag: 'record-me', variant: 'test' },
  networkPayloadCapture: { recordHeaders: true, recordBody: false },
  masking: { maskAllInputs: true, blockSelector: '.secret' },
  urlTriggers: [{ url: '^https://shop\\.example/checkout', matching: 'regex' }],
  urlBlocklist: [{ url: '/admin', matching: 'regex' }],
  eventTriggers: ['signup_clicked'],
  triggerMatchType: 'all',
  scriptConfig: null,
}

for (const postgres of ['embedded', 'real'] as StoreChoice[]) {
  describe(`session replay settings (${postgres} Postgres)`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(async () => {
      await stack?.close()
    })

    const patch = (body: unknown) => stack.api('/api/projects/1/', { method: 'PATCH', json: body })
    const post = (path: string, body: unknown) =>
      stack.app.handle(new Request(`${BASE}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }))
    /** sessionRecording as each endpoint answers it (remote config JSON and script, /flags v2, /decide v3 and v2) */
    const answers = async () => {
      const remote = await json(stack.app.handle(new Request(`${BASE}/array/${PROJECT_KEY}/config`)))
      const script = await (await stack.app.handle(new Request(`${BASE}/array/${PROJECT_KEY}/config.js`))).text()
      const window: { _POSTHOG_REMOTE_CONFIG?: Record<string, { config: Record<string, unknown> }> } = {}
      new Function('window', script)(window)
      const flags = await json(post('/flags/?v=2&config=true', { token: PROJECT_KEY, distinct_id: 'u1' }))
      const decide = await json(post('/decide/?v=3', { token: PROJECT_KEY, distinct_id: 'u1' }))
      const old = await json(post('/decide/?v=2', { token: PROJECT_KEY, distinct_id: 'u1', disable_flags: true }))
      return {
        remote: remote.sessionRecording,
        script: window._POSTHOG_REMOTE_CONFIG?.[PROJECT_KEY]?.config.sessionRecording,
        flags: flags.sessionRecording,
        decide: decide.sessionRecording,
        disabledFlags: old.sessionRecording,
        capturePerformance: [remote.capturePerformance, flags.capturePerformance, decide.capturePerformance],
        compression: [remote.supportedCompression, flags.supportedCompression, decide.supportedCompression],
      }
    }

    test('off by default: the project says so, every client config answers sessionRecording false', async () => {
      const project = await json(stack.api('/api/projects/1/'))
      expect(project).toMatchObject({
        session_recording_opt_in: false,
        session_recording_sample_rate: null,
        session_recording_minimum_duration_milliseconds: null,
        session_recording_linked_flag: null,
        session_recording_url_trigger_config: [],
        session_recording_event_trigger_config: [],
        capture_console_log_opt_in: true,
        capture_performance_opt_in: true,
        session_recording_retention_days: 30,
      })
      const a = await answers()
      expect([a.remote, a.script, a.flags, a.decide, a.disabledFlags]).toEqual([false, false, false, false, false])
      for (const c of a.compression) expect(c).toEqual(['gzip', 'gzip-js', 'lz64'])
    })

    test('PATCH turns it on: read back, and answered as PostHog does by the remote config, /flags and /decide', async () => {
      const changed = await patch(SETTINGS)
      expect(changed.status).toBe(200)
      const body = await json(changed)
      expect(body).toMatchObject({ ...SETTINGS, session_recording_sample_rate: '0.50' })
      expect(await json(stack.api('/api/projects/@current/'))).toMatchObject({ ...SETTINGS, session_recording_sample_rate: '0.50' })

      const a = await answers()
      for (const answer of [a.remote, a.script, a.flags, a.decide, a.disabledFlags]) expect(answer).toEqual(EXPECTED_RECORDING)
      for (const c of a.compression) expect(c).toEqual(['gzip', 'gzip-js', 'lz64'])
      for (const p of a.capturePerformance) expect(p).toEqual({ network_timing: true, web_vitals: false, web_vitals_allowed_metrics: null })

      // the answer read back can be sent again as is
      expect((await patch(body)).status).toBe(200)
    })

    test('PostHog’s nulls: full sampling, no minimum, a flag without variant, empty configs', async () => {
      await patch({
        session_recording_sample_rate: '1.00',
        session_recording_minimum_duration_milliseconds: 0,
        session_recording_linked_flag: { id: '12', key: 'record-me' },
        session_recording_network_payload_capture_config: {},
        session_recording_masking_config: null,
        session_recording_url_trigger_config: null,
        session_recording_trigger_match_type_config: null,
        capture_console_log_opt_in: true,
        capture_performance_opt_in: false,
      })
      const project = await json(stack.api('/api/projects/1/'))
      expect(project.session_recording_linked_flag).toEqual({ id: 12, key: 'record-me' })
      expect(project.session_recording_sample_rate).toBe('1.00')
      const a = await answers()
      expect(a.flags).toEqual({
        ...EXPECTED_RECORDING,
        consoleLogRecordingEnabled: true,
        sampleRate: null,
        minimumDurationMilliseconds: null,
        linkedFlag: 'record-me',
        networkPayloadCapture: null,
        masking: null,
        urlTriggers: null,
        triggerMatchType: null,
      })
      expect(a.remote).toEqual(a.flags)
      expect(a.decide).toEqual(a.flags)
      expect(a.capturePerformance).toEqual([false, false, false])
    })

    test('bad values: 400 naming the member, nothing changed', async () => {
      const before = await json(stack.api('/api/projects/1/'))
      const cases: [Record<string, unknown>, string][] = [
        [{ session_recording_opt_in: 'yes' }, 'session_recording_opt_in'],
        [{ session_recording_opt_in: null }, 'session_recording_opt_in'],
        [{ session_recording_sample_rate: 1.5 }, 'session_recording_sample_rate'],
        [{ session_recording_sample_rate: -0.1 }, 'session_recording_sample_rate'],
        [{ session_recording_sample_rate: '0.125' }, 'session_recording_sample_rate'],
        [{ session_recording_sample_rate: 'half' }, 'session_recording_sample_rate'],
        [{ session_recording_minimum_duration_milliseconds: 30001 }, 'session_recording_minimum_duration_milliseconds'],
        [{ session_recording_minimum_duration_milliseconds: 1.5 }, 'session_recording_minimum_duration_milliseconds'],
        [{ session_recording_linked_flag: { key: 'x' } }, 'session_recording_linked_flag'],
        [{ session_recording_linked_flag: { id: 1, key: 'x', extra: 1 } }, 'session_recording_linked_flag'],
        [{ session_recording_linked_flag: { id: 'one', key: 'x' } }, 'session_recording_linked_flag'],
        [{ session_recording_linked_flag: 'record-me' }, 'session_recording_linked_flag'],
        [{ session_recording_network_payload_capture_config: { recordEverything: true } }, 'session_recording_network_payload_capture_config'],
        [{ session_recording_masking_config: { maskAll: true } }, 'session_recording_masking_config'],
        [{ session_recording_masking_config: { blockSelector: 'x'.repeat(100_000) } }, 'session_recording_masking_config'],
        [{ session_recording_url_trigger_config: [{ url: '(', matching: 'regex' }] }, 'session_recording_url_trigger_config'],
        [{ session_recording_url_trigger_config: [{ url: '/a', matching: 'exact' }] }, 'session_recording_url_trigger_config'],
        [{ session_recording_url_blocklist_config: Array.from({ length: 101 }, () => ({ url: 'a', matching: 'regex' })) }, 'session_recording_url_blocklist_config'],
        [{ session_recording_url_blocklist_config: 'a' }, 'session_recording_url_blocklist_config'],
        [{ session_recording_event_trigger_config: [1] }, 'session_recording_event_trigger_config'],
        [{ session_recording_event_trigger_config: ['x'.repeat(401)] }, 'session_recording_event_trigger_config'],
        [{ session_recording_trigger_match_type_config: 'some' }, 'session_recording_trigger_match_type_config'],
        [{ capture_console_log_opt_in: 1 }, 'capture_console_log_opt_in'],
        [{ session_recording_retention_days: 0 }, 'session_recording_retention_days'],
        [{ session_recording_retention_days: 3651 }, 'session_recording_retention_days'],
        [{ session_recording_retention_days: null }, 'session_recording_retention_days'],
        // a good member does not carry a bad one
        [{ session_recording_opt_in: false, session_recording_sample_rate: 2 }, 'session_recording_sample_rate'],
      ]
      for (const [body, attr] of cases) {
        const response = await patch(body)
        const answer = await json(response)
        expect([attr, response.status, answer.type, answer.attr]).toEqual([attr, 400, 'validation_error', attr])
      }
      expect(await json(stack.api('/api/projects/1/'))).toEqual(before)
    })

    test('turning it off answers false at once; a change written by another process reaches this one', async () => {
      expect((await patch({ session_recording_opt_in: false })).status).toBe(200)
      const off = await answers()
      expect([off.remote, off.flags, off.decide]).toEqual([false, false, false])

      // another process: the row changed and the flag version bumped in one transaction, as its PATCH does
      const sql = stack.services.db.sql
      await sql.begin(async (tx) => {
        await tx`update projects set session_recording_opt_in = true where id = 1`
        await bumpFlagVersion(tx as never, 1, stack.services.db.supportsNotify)
      })
      const deadline = Date.now() + 10_000
      let seen: unknown = false
      while (Date.now() < deadline && seen === false) {
        await Bun.sleep(100)
        seen = (await json(post('/flags/?v=2&config=true', { token: PROJECT_KEY, distinct_id: 'u1' }))).sessionRecording
      }
      expect(seen).toMatchObject({ endpoint: '/s/', recorderVersion: 'v2' })
    })
  })
}
