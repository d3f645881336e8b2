import { PGlite } from '@electric-sql/pglite'
const rss = () => Math.round(process.memoryUsage().rss / 1e6)
const mode = process.argv[2]
const opts: any = {}
if (mode === 'sb') opts.startParams = ['--single', '-F', '-O', '-j', '-c', 'search_path=public', '-c', 'exit_on_error=false', '-c', 'log_checkpoints=false', '-c', 'shared_buffers=16MB']
if (mode === 'mem') opts.initialMemory = 64 * 1024 * 1024
const t = performance.now()
const db = await PGlite.create('/tmp/probe/pgdata', opts)
const r = await db.query("select setting from pg_settings where name = 'shared_buffers'")
for (let i = 0; i < 2000; i++) await db.query('select $1::int + 1', [i])
console.log(mode, 'shared_buffers', r.rows[0], 'rss', rss(), 'open ms', Math.round(performance.now() - t))
await db.close()
