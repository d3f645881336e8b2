// bun run bench/profile.ts decide|decide-stored|decide-500|ingest — a CPU profile of the service under one bench's
// load (`bun --cpu-prof-md`): the top functions by self time, printed; the whole profile is left in the directory shown.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { AGAINST_KINDS, planOf, type AgainstKind } from './against'
import { ROOT, startService, tempDir, wrk } from './lib'

const kind = (process.argv[2] ?? 'decide') as AgainstKind
if (!AGAINST_KINDS.includes(kind)) throw new Error(`profile one of ${AGAINST_KINDS.join(', ')}`)
const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const plan = planOf(kind)
const profileDir = tempDir('phog-profile-')
process.env.BENCH_BUN_FLAGS = `--cpu-prof --cpu-prof-md --cpu-prof-dir=${profileDir}`
const service = await startService({ DATA_DIR: tempDir('phog-profile-data-'), ...plan.env }, 1, ROOT)
await plan.setUp?.(service.url)
const result = await wrk(`${service.url}${plan.path}`, plan.bodies(), { seconds, connections: 32 })
await service.stop()
const md = readdirSync(profileDir).find((f) => f.endsWith('.md'))
process.stdout.write(`${kind}: ${Math.round(result.rps)} req/s under the profiler; profile in ${profileDir}\n\n`)
if (md) process.stdout.write(`${readFileSync(join(profileDir, md), 'utf8').split('\n').slice(0, Number(process.env.PROFILE_LINES ?? 60)).join('\n')}\n`)
