// GrowthBook's remote evaluation on a bare node:http server: what GrowthBook's proxy does for
// POST /api/eval/<client key> (the key's feature payload from its cache, the body's attributes checked,
// @growthbook/proxy-eval's evaluateFeatures, the evaluated features as JSON), without the proxy's express,
// its connection to a GrowthBook API, its sticky buckets and its logging.
//   node bench/peer/growthbook-server.mjs <port> <client key> <payload.json>
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { evaluateFeatures } from '@growthbook/proxy-eval'

const [port, clientKey, payloadFile] = process.argv.slice(2)
const payloads = new Map([[clientKey, JSON.parse(readFileSync(payloadFile, 'utf8'))]])
const MAX_KEYS = 1000
const PATH = '/api/eval/'

function send(res, status, body) {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

const isRecord = (v) => typeof v === 'object' && v !== null && !Array.isArray(v)

async function evaluate(req, res) {
  const payload = payloads.get(req.url.slice(PATH.length))
  if (payload === undefined) return send(res, 401, { error: 'unknown client key' })
  const chunks = []
  for await (const chunk of req) chunks.push(chunk)
  let body
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    return send(res, 400, { error: 'Invalid input' })
  }
  const { attributes = {}, forcedVariations = {}, forcedFeatures = [], url = '' } = isRecord(body) ? body : {}
  // the proxy's input checks: records, a list of pairs, at most 1000 keys each
  if (!isRecord(attributes) || !isRecord(forcedVariations) || !Array.isArray(forcedFeatures) || typeof url !== 'string') return send(res, 400, { error: 'Invalid input' })
  if (Object.keys(attributes).length > MAX_KEYS || Object.keys(forcedVariations).length > MAX_KEYS || forcedFeatures.length > MAX_KEYS) return send(res, 400, { error: 'Invalid input' })
  const evaluated = await evaluateFeatures({ payload, attributes, forcedVariations, forcedFeatures: new Map(forcedFeatures), url })
  send(res, 200, evaluated)
}

createServer((req, res) => {
  if (req.method === 'POST' && req.url.startsWith(PATH)) {
    evaluate(req, res).catch((error) => {
      console.error(error)
      if (!res.headersSent) send(res, 500, { error: 'evaluation failed' })
    })
  } else if (req.method === 'GET' && req.url === '/healthcheck') send(res, 200, { healthy: true })
  else send(res, 404, { error: 'not found' })
}).listen(Number(port), '127.0.0.1')
