-- Which person each distinct id belongs to, versioned: the query API's person_id is the person of the row with the
-- highest version (a merge writes every id of the merged person again, with a higher version). Copied from Postgres
-- by src/query/person-mapping.ts. In a cluster this table is replicated to every node (not sharded), so that each
-- shard joins its own events with a full local copy (docs/query.md).
CREATE TABLE IF NOT EXISTS {{database}}.person_distinct_id {{on_cluster}}
(
    team_id Int64,
    distinct_id String,
    person_id UUID,
    -- 1: the id belongs to nobody now (its person was erased)
    is_deleted UInt8 DEFAULT 0,
    version UInt64
)
ENGINE = {{ReplacingMergeTree(person_distinct_id, version)}}
ORDER BY (team_id, distinct_id);
