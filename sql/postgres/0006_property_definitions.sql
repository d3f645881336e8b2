-- Property definitions (learned from ingestion, curated over REST), which property was seen on which event, and
-- the curation columns event definitions gain (description, verified, hidden).

-- One name once per kind: as an event property, as a person property, once per group type index (and session).
create table property_definitions (
    id uuid primary key default gen_random_uuid(),
    team_id integer not null references projects (id) on delete cascade,
    name text not null,
    type text not null check (type in ('event', 'person', 'group', 'session')),
    group_type_index smallint check (group_type_index between 0 and 4),
    -- the first type ingestion detects sticks; the API may change it
    property_type text check (property_type in ('DateTime', 'String', 'Numeric', 'Boolean', 'Duration')),
    -- derived, so it can never disagree with property_type
    is_numerical boolean generated always as (coalesce(property_type = 'Numeric', false)) stored,
    description text not null default '',
    tags text[] not null default '{}',
    verified boolean not null default false,
    verified_at timestamptz,
    verified_by_id integer references users (id) on delete set null,
    hidden boolean not null default false,
    updated_at timestamptz,
    updated_by_id integer references users (id) on delete set null,
    check ((type = 'group') = (group_type_index is not null))
);
create unique index property_definitions_unique
    on property_definitions (team_id, type, (coalesce(group_type_index, -1)), name);

-- (event name, property name) pairs: what is_seen_on_filtered_events and seen_together read.
create table event_properties (
    team_id integer not null references projects (id) on delete cascade,
    event text not null,
    property text not null,
    primary key (team_id, event, property)
);

alter table event_definitions add column description text not null default '';
alter table event_definitions add column verified boolean not null default false;
alter table event_definitions add column verified_at timestamptz;
alter table event_definitions add column verified_by_id integer references users (id) on delete set null;
alter table event_definitions add column hidden boolean not null default false;
