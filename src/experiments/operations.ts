// An experiment's results, computed on the analytics thread (src/analytics/); its REST writes stay where the flag
// cache is (they change the experiment's flag).
import type { Operations } from '../http/offload'
import type { ExperimentsService } from './service'

export const experimentOperations = {
  'experiments.results': (s: { experiments: Pick<ExperimentsService, 'results'> }, [teamId, id, metricIndex]: [number, string, number], signal: AbortSignal) =>
    s.experiments.results(teamId, id, null, signal, metricIndex),
} satisfies Operations<never>
