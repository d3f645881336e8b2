-- Surveys (PostHog's Survey model): in-app questions posthog-js shows to the visitors its flags and conditions pick.
--
-- `questions`, `conditions` and `appearance` are validated by the service (counts and bytes bounded, HTML
-- sanitised, links https/mailto only) and stored as given. The targeting flags are ordinary rows of feature_flags,
-- written through the flag service in the same transaction under the project's flag write lock: the one made from
-- `targeting_flag_filters`, and the internal one (the visitor has neither dismissed nor answered the survey).
-- A draft has no start_date; a running survey has one and no end_date; a stopped one has both. DELETE removes the
-- row (as PostHog does) after deleting its flags. Names are unique within a project.
create table surveys (
    id uuid primary key,
    team_id integer not null references projects (id) on delete cascade,
    name varchar(400) not null,
    description text not null default '',
    type varchar(40) not null,
    schedule varchar(40) not null default 'once',
    linked_flag_id integer references feature_flags (id) on delete set null,
    targeting_flag_id integer references feature_flags (id) on delete set null,
    internal_targeting_flag_id integer references feature_flags (id) on delete set null,
    questions jsonb not null default '[]',
    conditions jsonb,
    appearance jsonb,
    start_date timestamptz,
    end_date timestamptz,
    archived boolean not null default false,
    responses_limit integer,
    iteration_count integer,
    iteration_frequency_days integer,
    iteration_start_dates jsonb,
    current_iteration integer,
    current_iteration_start_date timestamptz,
    enable_partial_responses boolean not null default false,
    response_sampling_start_date timestamptz,
    response_sampling_interval_type varchar(40),
    response_sampling_interval integer,
    response_sampling_limit integer,
    created_by_id integer references users (id) on delete set null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    unique (team_id, name)
);
create index surveys_by_team on surveys (team_id, created_at desc, id);
