// The bare baselines the benchmarks compare against: Bun.serve with no framework, no storage.
//   parse: read the body, JSON.parse it, answer {"status":1}   (the ingest baseline)
//   echo:  read a JSON body and answer it back                  (the decide baseline)
const mode = process.argv[2] ?? 'parse'
const port = Number(process.argv[3] ?? 0)
const OK = '{"status":1}'

const server = Bun.serve({
  port,
  hostname: '127.0.0.1',
  reusePort: false,
  async fetch(request) {
    const text = await request.text()
    if (mode === 'echo') {
      const body = JSON.parse(text)
      return Response.json({ featureFlags: {}, echo: body.distinct_id })
    }
    JSON.parse(text)
    return new Response(OK, { headers: { 'content-type': 'application/json' } })
  },
})
process.stdout.write(`${server.port}\n`)
