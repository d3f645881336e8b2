-- Session recordings (src/replay/clickhouse-store.ts): one row per block of a session, its metadata (what the
-- recordings list sums per session at read time, PostHog's session_replay_events folded by GROUP BY) beside its
-- JSON lines `[windowId, event]`, kept as recorded and compressed by the table (ZSTD where the server has codecs,
-- LZ4 on 18.16). A block written twice (a retry after a crash) has the same block_id and is replaced on merge;
-- reads use FINAL. Times are milliseconds since the epoch. In a cluster a session's blocks live on one shard.

CREATE TABLE IF NOT EXISTS {{database}}.{{session_replay_storage}} {{on_cluster}}
(
    team_id Int64,
    session_id String,
    block_id String,
    distinct_id String,
    first_timestamp Int64,
    last_timestamp Int64,
    first_url String,
    click_count UInt32,
    keypress_count UInt32,
    mouse_activity_count UInt32,
    active_milliseconds Int64,
    first_activity Int64,
    last_activity Int64,
    console_log_count UInt32,
    console_warn_count UInt32,
    console_error_count UInt32,
    size UInt64,
    event_count UInt32,
    snapshot_source String,
    snapshot_library String,
    lines String {{zstd}},
    _inserted_at {{datetime}} DEFAULT {{now}}
)
ENGINE = {{ReplacingMergeTree(session_replay_blocks, _inserted_at)}}
PARTITION BY toYYYYMM(toDateTime(intDiv(first_timestamp, 1000)))
ORDER BY (team_id, session_id, block_id);

-- when: cluster
CREATE TABLE IF NOT EXISTS {{database}}.session_replay_blocks {{on_cluster}} AS {{database}}.session_replay_blocks_local
ENGINE = Distributed('{{cluster}}', '{{database}}', 'session_replay_blocks_local', cityHash64(session_id));
