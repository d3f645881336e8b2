// How late the serving thread's timers fire: the time one turn of its event loop kept everything else waiting (or the
// CPU kept the thread off). The figure to read first when capture or /decide slow down: a lag here is this thread's
// (or the machine's); none here while clients wait points elsewhere (the network, a store).
import type { Metrics } from './metrics'

const TICK_MS = 20

/** Starts measuring; the answer stops it. */
export function watchEventLoopLag(metrics: Pick<Metrics, 'eventLoopLag' | 'eventLoopLagMax' | 'beforeScrape'>): () => void {
  let last = performance.now()
  let worst = 0
  const timer = setInterval(() => {
    const now = performance.now()
    const lag = Math.max(0, now - last - TICK_MS)
    last = now
    if (lag > worst) worst = lag
    metrics.eventLoopLag.observe(lag / 1000)
  }, TICK_MS)
  timer.unref?.()
  // the worst since the last scrape, then anew
  metrics.beforeScrape.push(() => {
    metrics.eventLoopLagMax.set(worst / 1000)
    worst = 0
  })
  return () => clearInterval(timer)
}
