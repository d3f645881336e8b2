-- Every distinct id → person row carries a version, taken from one sequence whenever the row is written (a new
-- id, or an id re-pointed by a merge). The query API keeps a copy of this mapping where the events are (ClickHouse
-- or the embedded event store) and copies what changed by version (src/query/person-mapping.ts). The learner writes
-- a project's rows under the project's advisory lock, so within a project versions commit in order. The rows that
-- exist when this runs get versions too: the first copy is the backfill.
create sequence if not exists person_distinct_id_version;

alter table person_distinct_ids add column if not exists version bigint not null default nextval('person_distinct_id_version');

create index if not exists person_distinct_ids_by_version on person_distinct_ids (team_id, version);

create or replace function person_distinct_ids_bump_version() returns trigger language plpgsql as $$
begin
    new.version := nextval('person_distinct_id_version');
    return new;
end
$$;

drop trigger if exists person_distinct_ids_version on person_distinct_ids;
create trigger person_distinct_ids_version before update on person_distinct_ids
    for each row execute function person_distinct_ids_bump_version();

-- An erased person's distinct ids leave a tombstone with the next version, so that the copy where the events are
-- learns they belong to nobody now. (A merge never deletes a row: it re-points it first.)
create table if not exists person_distinct_id_tombstones (
    team_id integer not null references projects (id) on delete cascade,
    distinct_id text not null,
    version bigint not null default nextval('person_distinct_id_version'),
    primary key (team_id, version)
);

create or replace function person_distinct_ids_tombstone() returns trigger language plpgsql as $$
begin
    insert into person_distinct_id_tombstones (team_id, distinct_id) values (old.team_id, old.distinct_id);
    return old;
end
$$;

drop trigger if exists person_distinct_ids_deleted on person_distinct_ids;
create trigger person_distinct_ids_deleted after delete on person_distinct_ids
    for each row execute function person_distinct_ids_tombstone();
