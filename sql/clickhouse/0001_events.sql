-- Migrations are templates filled by src/events/dialect.ts ({{…}}): the same file serves ClickHouse 18.16
-- (legacy types), current ClickHouse (DateTime64, LowCardinality, ZSTD, insert deduplication) and clusters
-- (Replicated tables ON CLUSTER behind a Distributed table). A statement after "-- when: cluster" or
-- "-- when: single" runs only in that mode. Statements end with a semicolon at the end of a line.

CREATE TABLE IF NOT EXISTS {{database}}.{{events_storage}} {{on_cluster}}
(
    uuid UUID,
    team_id Int64,
    event {{low_cardinality_string}},
    distinct_id String,
    properties String {{zstd}},
    timestamp {{datetime}},
    created_at {{datetime}},
    person_id Nullable(UUID),
    _inserted_at {{datetime}} DEFAULT {{now}}
)
ENGINE = {{ReplacingMergeTree(events, _inserted_at)}}
PARTITION BY toYYYYMM(timestamp)
ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), {{uuid_hash}})
{{table_settings}};

-- when: cluster
CREATE TABLE IF NOT EXISTS {{database}}.events {{on_cluster}} AS {{database}}.events_local
ENGINE = Distributed('{{cluster}}', '{{database}}', 'events_local', cityHash64(distinct_id));
