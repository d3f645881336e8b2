-- The embedded event store (SQLite): the same columns as ClickHouse's events table.
-- Timestamps are epoch milliseconds. (team_id, uuid) is unique, so a replayed flush cannot duplicate a row.
CREATE TABLE IF NOT EXISTS events (
    uuid TEXT NOT NULL,
    team_id INTEGER NOT NULL,
    event TEXT NOT NULL,
    distinct_id TEXT NOT NULL,
    properties TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    person_id TEXT,
    PRIMARY KEY (team_id, uuid)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS events_by_time ON events (team_id, timestamp DESC, uuid DESC);
CREATE INDEX IF NOT EXISTS events_by_name ON events (team_id, event, timestamp DESC, uuid DESC);
CREATE INDEX IF NOT EXISTS events_by_distinct_id ON events (team_id, distinct_id, timestamp DESC, uuid DESC);
