-- The embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): the same columns as SQLite's events table,
-- timestamps as epoch milliseconds. A columnar table with no index: rows land in time order, so the zone maps of
-- timestamp prune a time range; uniqueness of (team_id, uuid) is kept by the writer (an in-doubt insert skips the
-- uuids already stored), as on ClickHouse.
CREATE TABLE IF NOT EXISTS events (
    uuid VARCHAR NOT NULL,
    team_id BIGINT NOT NULL,
    event VARCHAR NOT NULL,
    distinct_id VARCHAR NOT NULL,
    properties VARCHAR NOT NULL,
    timestamp BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    person_id VARCHAR
);

-- Which person each distinct id belongs to (copied from the persons store by src/query/person-mapping.ts);
-- person_id NULL: the id belongs to nobody now (its person was erased). A row is replaced only by a higher version.
CREATE TABLE IF NOT EXISTS person_distinct_id (
    team_id BIGINT NOT NULL,
    distinct_id VARCHAR NOT NULL,
    person_id VARCHAR,
    version BIGINT NOT NULL,
    PRIMARY KEY (team_id, distinct_id)
);
