// ./node_modules/.bin/bun bench/experiments.ts [persons per variant, default 5000]
// An experiment's results on the embedded stores (in-process): two variants of `n` exposed persons each, a quarter
// of the control and a third of the test converting, sent through capture; then the time of the results (the
// exposure and metric reads through the query layer, the join and the statistics), Bayesian and frequentist.
import { BASE, learned, PROJECT_KEY, startStack } from '../test/helpers/stack'

const n = Number(process.argv[2] ?? 5000)
const stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20 })
try {
  const t0 = Date.now() - 3_600_000
  const events: unknown[] = []
  for (const [v, variant] of ['control', 'test'].entries()) {
    for (let i = 0; i < n; i++) {
      const distinct_id = `${variant}-${i}`
      events.push({ event: '$feature_flag_called', timestamp: new Date(t0 + i).toISOString(), properties: { distinct_id, $feature_flag: 'bench-exp', $feature_flag_response: variant } })
      if (i % (v === 0 ? 4 : 3) === 0) events.push({ event: 'signup', timestamp: new Date(t0 + 60_000 + i).toISOString(), properties: { distinct_id } })
    }
  }
  const seeded = performance.now()
  for (let i = 0; i < events.length; i += 2000) {
    const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: events.slice(i, i + 2000) }) }))
    if (r.status !== 200) throw new Error(`batch: ${r.status}`)
  }
  await learned(stack, 120_000)
  for (let i = 0; i < 600; i++) {
    const [[persons]] = (await stack.services.query.run(1, "SELECT count(DISTINCT person_id) FROM events WHERE event = '$feature_flag_called'")).results as number[][]
    if (persons === 2 * n) break
    await Bun.sleep(100)
  }
  console.log(`${events.length} events of ${2 * n} persons sent and stored in ${((performance.now() - seeded) / 1000).toFixed(1)} s`)
  const api = (path: string, method = 'GET', json?: unknown) =>
    stack.api(`/api/projects/1${path}`, { method, ...(json ? { json } : {}) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
  const made = await api('/experiments/', 'POST', { name: 'Bench', feature_flag_key: 'bench-exp', metrics: [{ kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'signup' }] }] })
  await api(`/experiments/${made.body.id}/`, 'PATCH', { start_date: new Date(t0 - 60_000).toISOString() })
  for (const method of ['bayesian', 'frequentist']) {
    await api(`/experiments/${made.body.id}/`, 'PATCH', { stats_config: { method } })
    const times: number[] = []
    let answer: any
    for (let i = 0; i < 3; i++) {
      const started = performance.now()
      answer = await api(`/experiments/${made.body.id}/results/`)
      times.push(performance.now() - started)
    }
    const v = answer.body.variant_results[0]
    console.log(`${method}: results in ${times.map((t) => t.toFixed(0)).join(' / ')} ms; control ${answer.body.baseline.sum}/${answer.body.baseline.number_of_samples}, test ${v.sum}/${v.number_of_samples}, ${method === 'bayesian' ? `chance to win ${v.chance_to_win.toFixed(4)}` : `p ${v.p_value.toExponential(2)}`}`)
  }
} finally {
  await stack.close()
}
