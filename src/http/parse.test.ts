import { describe, expect, test } from 'bun:test'
import { formObject } from './parse'

const form = (body: string) => new Response(body, { headers: { 'content-type': 'application/x-www-form-urlencoded' } }).formData()

describe('form bodies', () => {
  test('one value as itself, repeated names as a list in their order', async () => {
    expect(formObject(await form('a=1&b=2&a=3&a=4&__proto__=x'))).toEqual({ a: ['1', '3', '4'], b: '2', ['__proto__']: 'x' })
    expect(Object.getPrototypeOf(formObject(await form('__proto__=x')))).toBe(Object.prototype)
  })

  test('100,000 distinct names in linear time', async () => {
    const body = Array.from({ length: 100_000 }, (_, i) => `k${i}=${i}`).join('&')
    const started = performance.now()
    const out = formObject(await form(body))
    console.log(`[parse] 100,000 form fields in ${Math.round(performance.now() - started)} ms`)
    expect(Object.keys(out).length).toBe(100_000)
    expect(out.k99999).toBe('99999')
  })
})
