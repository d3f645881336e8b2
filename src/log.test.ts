import { describe, expect, test } from 'bun:test'
import { Writable } from 'node:stream'
import { createLogger, scrubKeys } from './log'

function capture() {
  let out = ''
  const stream = new Writable({
    write(chunk, _enc, done) {
      out += chunk.toString()
      done()
    },
  })
  return { stream, text: () => out }
}

describe('logs never carry keys', () => {
  test('in messages, in any field, nested, in error stacks', async () => {
    const sink = capture()
    const log = createLogger('debug', sink.stream as never)
    log.info({ path: '/array/phc_secretsecret123/config', nested: { url: 'x?personal_api_key=phx_abcdefgh123' } }, 'key phx_zzzzzzzzzz9 in message')
    log.error({ err: new Error('bad token phc_qqqqqqqqqq1') }, 'failed')
    log.info({ authorization: 'Bearer phx_hhhhhhhhhh1', token: 'phc_tttttttttt1' }, 'redacted by name')
    await Bun.sleep(50)
    const text = sink.text()
    for (const k of ['phc_secretsecret123', 'phx_abcdefgh123', 'phx_zzzzzzzzzz9', 'phc_qqqqqqqqqq1', 'phx_hhhhhhhhhh1', 'phc_tttttttttt1']) expect(text).not.toContain(k)
    expect(text).toContain('phc_…redacted')
  })

  test('the scrubber leaves other text alone', () => {
    expect(scrubKeys('phone photo ph_x')).toBe('phone photo ph_x')
  })
})
