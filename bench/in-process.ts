// bun run bench/in-process.ts [decide|decide-stored|decide-500] — the request path alone: /decide answered by app.handle() in
// this process, without sockets or wrk, so that a CPU profile (BUN flags --cpu-prof --cpu-prof-md) shows only the
// route, its hooks and the evaluation. Prints µs per request (a figure to compare runs of the same machine, no more).
import { benchFlags, decideBodies, KEY, manyFlags, PERSONAL, returningBodies, setUp } from './decide'
import { startStack } from '../test/helpers/stack'

const kind = process.argv[2] ?? 'decide'
const count = Number(process.env.BENCH_REQUESTS ?? 50_000)
const stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { INIT_PROJECT_API_KEY: KEY, INIT_PERSONAL_API_KEY: PERSONAL, RATE_LIMIT_API_PER_MINUTE: '0' })
// setUp talks HTTP: give it a server in front of the app for the set-up only
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => stack.app.handle(request) })
await setUp(`http://127.0.0.1:${server.port}`, kind === 'decide-500' ? manyFlags() : benchFlags())
server.stop(true)
const bodies = kind === 'decide-stored' ? returningBodies() : decideBodies(64)
const request = (i: number) =>
  new Request('http://localhost/decide/?v=3', { method: 'POST', body: bodies[i % bodies.length], headers: { 'content-type': 'application/json', 'content-length': String(bodies[i % bodies.length].length) } })
for (let i = 0; i < 5000; i++) await (await stack.app.handle(request(i))).text()
const started = performance.now()
for (let i = 0; i < count; i++) {
  const r = await stack.app.handle(request(i))
  if (r.status !== 200) throw new Error(`${r.status} ${await r.text()}`)
  await r.text()
}
const us = ((performance.now() - started) * 1000) / count
process.stdout.write(`${kind}: ${us.toFixed(1)} µs a request in-process (${count} requests)\n`)
await stack.close()
process.exit(0)
