// npm run bench [-- ingest|decide|flush|spread|saturated|embedded|query|insights|backup|replay|move|multicore|peer|all] (saturated: ingest and flush, and their ratio to L; multicore: 1 process against 2 on one port, bench/multicore.ts; peer: /decide against GrowthBook and Unleash on the same flags, bench/peer.ts) — figures against bare baselines measured in the same run.
// npm run bench -- decide|decide-stored|decide-500|ingest --against <git rev> — this tree against another revision, interleaved (bench/against.ts).
import { cpus, totalmem } from 'node:os'
import { ingestBench, ingestFigures } from './ingest'
import { decideBench } from './decide'
import { flushBench, flushFigures } from './flush'
import { spreadBench } from './spread'
import { embeddedBench } from './embedded'
import { queryBench } from './query'
import { insightsBench } from './insights'
import { backupBench } from './backup'
import { replayBench } from './replay'
import { moveBench } from './move'
import { AGAINST_KINDS, againstBench, type AgainstKind } from './against'

const which = process.argv[2] ?? 'all'
const againstAt = process.argv.indexOf('--against')
const against = againstAt > 0 ? process.argv[againstAt + 1] : undefined
const seconds = Number(process.env.BENCH_SECONDS ?? (against ? 5 : 10))
const processes = Number(process.env.BENCH_PROCESSES ?? 1)

const header = `## phog benchmarks — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Bun ${Bun.version}\n`
process.stdout.write(`${header}\n`)
if (against !== undefined) {
  if (!(AGAINST_KINDS as readonly string[]).includes(which)) throw new Error(`--against compares one of ${AGAINST_KINDS.join(', ')}, not ${which}`)
  process.stdout.write(`${await againstBench(which as AgainstKind, against, seconds, Number(process.env.BENCH_ROUNDS ?? 3))}\n`)
  process.exit(0)
}
if (which === 'ingest' || which === 'saturated' || which === 'all') process.stdout.write(`${await ingestBench(seconds, { processes })}\n`)
if (which === 'decide' || which === 'all') process.stdout.write(`${await decideBench(seconds)}\n`)
if (which === 'flush' || which === 'saturated' || which === 'all') process.stdout.write(`${await flushBench()}\n`)
if (which === 'spread' || which === 'all') process.stdout.write(`${await spreadBench(seconds)}\n`)
if (which === 'embedded' || which === 'all') process.stdout.write(`${await embeddedBench()}\n`)
if (which === 'query' || which === 'all') process.stdout.write(`${await queryBench()}\n`)
if (which === 'insights' || which === 'all') process.stdout.write(`${await insightsBench()}\n`)
if (which === 'backup') process.stdout.write(`${await backupBench()}\n`)
if (which === 'replay') process.stdout.write(`${await replayBench(seconds)}\n`)
if (which === 'move') process.stdout.write(`${await moveBench()}\n`)
if (which === 'peer') process.stdout.write(`${await (await import('./peer')).peerBench(seconds, Number(process.env.BENCH_ROUNDS ?? 3))}\n`)
if (which === 'multicore') process.stdout.write(`${await (await import('./multicore')).multicoreBench(seconds)}\n`)

// Events flushed per second while /batch/ is saturated, against L = 1 / (1/bare parse rate + 1/raw insert rate):
// what one core parsing and one core inserting could sustain together.
if (ingestFigures.clickhouseFlushedUnderLoad > 0 && flushFigures.rawEventsPerSecond > 0) {
  const limit = 1 / (1 / ingestFigures.bareEventsPerSecond + 1 / flushFigures.rawEventsPerSecond)
  const ratio = ingestFigures.clickhouseFlushedUnderLoad / limit
  process.stdout.write(
    `### saturated flush: ${Math.round(ingestFigures.clickhouseFlushedUnderLoad)} events/s stored into ClickHouse while /batch/ was saturated; ` +
      `L = ${Math.round(limit)} (bare parse ${Math.round(ingestFigures.bareEventsPerSecond)}/s, raw insert ${Math.round(flushFigures.rawEventsPerSecond)}/s): ${ratio.toFixed(2)} L\n`,
  )
}
