// The issue-27 worst case for local evaluation, stored past every write-time limit (a chain of 60 flags with
// 400-character keys, and a flag of 100 conditions × 100 `flag_evaluates_to` filters on its top), built by the
// local_evaluation code of a phog tree: the answer's size, time and this process's memory. Compare two trees:
//   bun bench/local-evaluation-worst.ts /path/to/old/tree ; bun bench/local-evaluation-worst.ts .
import { resolve } from 'node:path'

const root = resolve(process.argv[2] ?? '.')
const { buildEntry } = await import(`${root}/src/flags/cache.ts`)
const { localEvaluationOf } = await import(`${root}/src/flags/local-evaluation.ts`)
const depends = (id: number) => ({ key: String(id), type: 'flag', value: true, operator: 'flag_evaluates_to' })
const flag = (id: number, key: string, properties: unknown[]) => ({
  id, team_id: 1, key, name: '', filters: { groups: [{ properties, rollout_percentage: 100 }] },
  rollout_percentage: null, active: true, deleted: false, ensure_experience_continuity: false, version: 1,
})
const flags: unknown[] = []
for (let i = 1; i <= 60; i++) flags.push(flag(i, `chain-${i}-`.padEnd(400, 'x'), i === 1 ? [] : [depends(i - 1)]))
flags.push({ ...flag(100, 'attack', []), filters: { groups: Array.from({ length: 100 }, () => ({ properties: Array.from({ length: 100 }, () => depends(60)), rollout_percentage: 100 })) } })

const MB = (n: number) => `${(n / 1e6).toFixed(1)} MB`
const rss = process.memoryUsage().rss
const started = performance.now()
let outcome: string
try {
  outcome = `answer ${MB(localEvaluationOf(buildEntry(1, { version: 1, flags, groupTypes: [], cohorts: [] }), true).body.length)}`
} catch (error) {
  outcome = `refused: ${(error as Error).message}`
}
console.log(`${root}: ${outcome} in ${(performance.now() - started).toFixed(0)} ms; RSS ${MB(rss)} → ${MB(process.memoryUsage().rss)}`)
