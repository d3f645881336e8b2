// npm run bench [-- ingest|decide|flush|all] — figures against bare baselines measured in the same run.
import { cpus, totalmem } from 'node:os'
import { ingestBench } from './ingest'
import { decideBench } from './decide'
import { flushBench } from './flush'

const which = process.argv[2] ?? 'all'
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const processes = Number(process.env.BENCH_PROCESSES ?? 1)

const header = `## phog benchmarks — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Bun ${Bun.version}\n`
process.stdout.write(`${header}\n`)
if (which === 'ingest' || which === 'all') process.stdout.write(`${await ingestBench(seconds, { processes })}\n`)
if (which === 'decide' || which === 'all') process.stdout.write(`${await decideBench(seconds)}\n`)
if (which === 'flush' || which === 'all') process.stdout.write(`${await flushBench()}\n`)
