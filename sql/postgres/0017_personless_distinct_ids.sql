-- Distinct ids seen on events while they had no person: posthog-js at its defaults sends an anonymous visitor's
-- events with `$process_person_profile: false`, and no person is made for them, yet each such id counts as one
-- person whose uuid is the deterministic one a person of that id would get. No row in persons (the persons API
-- does not list them): a row here, which the copy of the mapping where the events are writes as "this id belongs
-- to that uuid" (src/query/person-mapping.ts). Its version comes from the same sequence as person_distinct_ids'
-- versions, so an $identify or alias that later gives the id a person writes a higher version and re-points the
-- id's past events. Written by the learner under the project's advisory lock, as person_distinct_ids is.
-- (made by 0011 already; named here too so that this file stands on its own)
create sequence if not exists person_distinct_id_version;

create table if not exists personless_distinct_ids (
    team_id integer not null references projects (id) on delete cascade,
    distinct_id text not null,
    version bigint not null default nextval('person_distinct_id_version'),
    primary key (team_id, distinct_id)
);

create index if not exists personless_distinct_ids_by_version on personless_distinct_ids (team_id, version);
