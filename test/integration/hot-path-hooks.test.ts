// The hooks every request passes through stay synchronous: an async request hook makes Elysia wrap every route in
// one more promise (measured: 5–11 % of /decide's rate). Elysia decides by the hook's source text, so a word such
// as "await" in it, or `return f(…)`, is enough to lose this silently.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { isAsync } from 'elysia/compose'
import { startStack, type Stack } from '../helpers/stack'

describe('hot path hooks', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' })
  }, 60_000)
  afterAll(() => stack?.close())

  test('the global request hooks are synchronous', () => {
    const hooks = (stack.app as unknown as { event: { request?: { fn: Function }[] } }).event.request ?? []
    expect(hooks.length).toBeGreaterThan(0)
    for (const hook of hooks) expect({ hook: hook.fn.name, async: isAsync(hook) }).toEqual({ hook: hook.fn.name, async: false })
  })

  // An after-response hook makes every request schedule a deferred task (setImmediate and a promise): requests are
  // counted where their answer is decided instead, by a synchronous after-handle hook and the error handler.
  test('no after-response hook; the after-handle hooks are synchronous', () => {
    const events = (stack.app as unknown as { event: { afterResponse?: unknown[]; afterHandle?: { fn: Function }[] } }).event
    expect(events.afterResponse ?? []).toEqual([])
    expect((events.afterHandle ?? []).length).toBeGreaterThan(0)
    for (const hook of events.afterHandle ?? []) expect({ hook: hook.fn.name, async: isAsync(hook) }).toEqual({ hook: hook.fn.name, async: false })
  })

  // Elysia reads the hooks' parameter lists to decide what to prepare for each request: a hook taking the whole
  // context (not destructured) makes every route parse all headers and cookies first.
  test('/decide and capture parse no headers, cookies or query into the context', async () => {
    await stack.app.handle(new Request('http://localhost/decide/?v=3', { method: 'POST', body: '{}' }))
    await stack.app.handle(new Request('http://localhost/batch/', { method: 'POST', body: '{}' }))
    const routes = (stack.app as unknown as { router: { history: { path: string; method: string; composed?: Function }[] } }).router.history
    for (const path of ['/decide', '/batch']) {
      const route = routes.find((r) => r.path === path && r.method === 'POST')
      const code = String(route?.composed)
      expect({ path, compiled: code.includes('async function handle') }).toEqual({ path, compiled: true })
      for (const work of ['headers.toJSON', 'parseCookie', 'parseQuery', 'setImmediate']) expect({ path, work, found: code.includes(work) }).toEqual({ path, work, found: false })
    }
  })
})
