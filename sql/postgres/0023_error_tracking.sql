-- Error tracking (src/error-tracking/): issues, and the fingerprints grouped into each. The flush worker names a new
-- fingerprint's issue itself (a UUID of the project and the fingerprint, so that storing events never waits for
-- Postgres); `moved` marks a fingerprint whose issue is another one (a merge, a split), which the worker reads back
-- to tag new events. Reads always go through the fingerprints: an issue's events are its fingerprints' events.
create table if not exists error_tracking_issues (
    id uuid primary key,
    team_id integer not null references projects (id) on delete cascade,
    status text not null default 'active',
    name text,
    description text,
    -- PostHog's {"type": "user", "id": …}
    assignee jsonb,
    first_seen timestamptz,
    last_seen timestamptz,
    -- when it was last resolved: only events received after it make it active again
    resolved_at timestamptz,
    created_at timestamptz not null default now(),
    constraint error_tracking_issues_status_check check (status in ('active', 'resolved', 'suppressed')),
    constraint error_tracking_issues_text_check check (coalesce(length(name), 0) <= 2048 and coalesce(length(description), 0) <= 4096)
);
create index if not exists error_tracking_issues_team on error_tracking_issues (team_id, last_seen desc);

create table if not exists error_tracking_fingerprints (
    team_id integer not null references projects (id) on delete cascade,
    fingerprint text not null,
    issue_id uuid not null references error_tracking_issues (id) on delete cascade,
    first_seen timestamptz not null default now(),
    moved boolean not null default false,
    primary key (team_id, fingerprint),
    constraint error_tracking_fingerprints_length_check check (length(fingerprint) <= 256)
);
create index if not exists error_tracking_fingerprints_issue on error_tracking_fingerprints (issue_id);
create index if not exists error_tracking_fingerprints_moved on error_tracking_fingerprints (team_id) where moved;

-- PostHog's team field: the remote config turns posthog-js's exception autocapture on from it
alter table projects add column if not exists autocapture_exceptions_opt_in boolean;
