-- Which person each distinct id belongs to (the query API's person_id and the events API's), copied from the
-- persons store by src/query/person-mapping.ts; a row is replaced only by a higher version.
CREATE TABLE IF NOT EXISTS person_distinct_id (
    team_id INTEGER NOT NULL,
    distinct_id TEXT NOT NULL,
    -- NULL: the id belongs to nobody now (its person was erased)
    person_id TEXT,
    version INTEGER NOT NULL,
    PRIMARY KEY (team_id, distinct_id)
) WITHOUT ROWID;
