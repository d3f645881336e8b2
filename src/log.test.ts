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
    expect(scrubKeys('100% sure, 50%5F off, a\\u0041b, /path%2Fto')).toBe('100% sure, 50%5F off, a\\u0041b, /path%2Fto')
  })

  test('escaped keys: JSON \\u escapes and URL %-escapes anywhere in the key, once or twice escaped', () => {
    const secret = 'escapedsecret42'
    const forms = [
      'phx\\u005fescapedsecret42', // raw JSON
      '\\u0070\\u0068\\u0078\\u005f\\u0065scapedsecret42', // every character of the prefix escaped
      'phx_escaped\\u0073ecret42', // an escape inside the secret part
      'phx\\\\u005fescapedsecret42', // JSON inside JSON
      'phc%5Fescapedsecret42', // a path or query
      'phc%255Fescapedsecret42', // URL-encoded twice
      'phs%5fescaped%73ecret42',
    ]
    for (const form of forms) {
      const out = scrubKeys(`{"api_key":"${form}","x":1} /array/${form}/config`)
      expect({ form, out }).toEqual({ form, out: expect.not.stringContaining(secret.slice(-8)) as unknown as string })
      expect(out).toContain('…redacted')
    }
  })

  test('parsed values: field names and deeply nested values too', async () => {
    const sink = capture()
    const log = createLogger('debug', sink.stream as never)
    let deep: unknown = 'phx_deepdeepsecret1'
    for (let i = 0; i < 12; i++) deep = { level: deep }
    log.warn({ groups: { phx_fieldnamesecret1: 'x' }, deep, list: [['phc\\u005flistsecret1']] }, 'parsed')
    await Bun.sleep(50)
    const text = sink.text()
    for (const k of ['fieldnamesecret1', 'deepdeepsecret1', 'listsecret1']) expect(text).not.toContain(k)
  })
})
