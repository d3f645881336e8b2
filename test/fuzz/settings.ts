// How much the fuzzers run, and from which seed. `npm test` runs a reduced, fixed sequence (a failure in CI is the
// same failure on a laptop: the seed is in the message and the run repeats it); FUZZ_FULL=1 (`npm run chaos`) runs
// many more from a new seed each time, and FUZZ_SEED / FUZZ_RUNS repeat one such run.
export const FULL = process.env.FUZZ_FULL === '1' || process.env.CHAOS_FULL === '1'

/** fast-check's parameters for a property: `reduced` runs in `npm test`, `full` under FUZZ_FULL. */
export function fuzzParams(reduced: number, full: number): { numRuns: number; seed?: number } {
  const numRuns = Number(process.env.FUZZ_RUNS) || (FULL ? full : reduced)
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : FULL ? undefined : 20261128
  return seed === undefined ? { numRuns } : { numRuns, seed }
}
