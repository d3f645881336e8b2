// Where compiled queries run: ClickHouse (a server, a cluster, or chDB in tests) or the embedded event store.
export { ownStatement, QueryRunError, type QueryRunner, type RunOptions, type RunResult } from './runner'
export { ClickHouseQueryRunner, type ClickHouseRunnerOptions } from './clickhouse-runner'
export { SqliteQueryRunner } from './sqlite-runner'
export { DuckDbQueryRunner } from './duckdb-runner'
