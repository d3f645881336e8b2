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
})
