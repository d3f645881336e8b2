// The compiler's own thread answers what compiling on the caller's thread answers, and a thread that goes away
// fails what waited on it (never a query left hanging); the next compile starts another.
import { afterAll, expect, test } from 'bun:test'
import { compileHere, CompileThread, type CompileRequest } from './compile-thread'

const thread = new CompileThread()
afterAll(() => thread.close())

const request = (text: string): CompileRequest => ({ text, target: { dialect: 'sqlite', teamId: 7, now: Date.UTC(2024, 0, 1) }, deadline: Date.now() + 30_000 })
const withoutTime = ({ ms: _, ...answer }: { ms: number }) => answer

test('the same answers as on the caller’s thread: compiled, refused by a limit, refused by syntax', async () => {
  for (const text of [
    "SELECT event, count() FROM events WHERE properties.$browser = 'Chrome' AND timestamp > now() - INTERVAL 1 DAY GROUP BY event",
    `SELECT event AS a0, ${Array.from({ length: 23 }, (_, i) => `concat(a${i}, a${i}) AS a${i + 1}`).join(', ')} FROM events`,
    'SELECT event FROM events WHERE (',
  ]) {
    expect(withoutTime(await thread.compile(request(text)))).toEqual(withoutTime(compileHere(request(text))))
  }
})

test('closing the thread fails the compiles waiting on it; the next compile starts another thread', async () => {
  const waiting = thread.compile(request(`SELECT count() FROM events WHERE ${Array(5_000).fill("event = 'x'").join(' OR ')}`))
  thread.close()
  expect(await waiting).toMatchObject({ failed: { message: 'the compiler thread was closed' } })
  expect(await thread.compile(request('SELECT 1 FROM events'))).toHaveProperty('compiled')
})
