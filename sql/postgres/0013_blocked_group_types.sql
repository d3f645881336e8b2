-- Group types an admin deleted: an event naming one takes no slot again until an admin unblocks it
-- (POST …/groups_types/unblock/). Kept to the newest 1,000 a project (group-types-repository.ts).
create table if not exists group_types_blocked (
    team_id integer not null references projects (id) on delete cascade,
    group_type text not null,
    blocked_at timestamptz not null default now(),
    primary key (team_id, group_type)
);
