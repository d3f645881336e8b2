// An analytics thread that misbehaves on purpose, for the serving thread's promises (src/analytics/threads.test.ts):
// `silent` never answers a call (a thread stuck in a long encoding), `crash` dies on the first call, `fatal` cannot
// open its stores (chosen by the LOG_LEVEL it is given: info, fatal, error). Every call it
// gets and every cancel it is sent are reported back as metrics calls, so the test sees them.
declare const self: Worker
export {}

let mode = 'silent'
self.onmessage = (event: MessageEvent<{ type: string; id?: number; op?: string; config?: { LOG_LEVEL: string } }>) => {
  const m = event.data
  if (m.type === 'init') {
    mode = m.config?.LOG_LEVEL === 'fatal' ? 'crash' : m.config?.LOG_LEVEL === 'error' ? 'fatal' : 'silent'
    if (mode === 'fatal') self.postMessage({ type: 'fatal', message: 'the store refused the connection' })
    else self.postMessage({ type: 'ready' })
  } else if (m.type === 'call') {
    if (mode === 'crash') throw new Error('the thread fell over')
    self.postMessage({ type: 'metrics', calls: [['analyticsRequests', 'inc', { op: `seen:${m.op}`, outcome: 'test' }, null]] })
  } else if (m.type === 'cancel') {
    self.postMessage({ type: 'metrics', calls: [['analyticsRequests', 'inc', { op: `cancelled:${m.id}`, outcome: 'test' }, null]] })
  } else if (m.type === 'close') self.postMessage({ type: 'closed' })
}
