-- What the console needs: users who sign in with a password, their sessions, and flags' change history.

-- Console sign-in: users get an argon2id password hash; a sign-in opens a session. Only a hash of the session's
-- token (and of its CSRF token) is stored, so a copy of this table lets nobody in. A session ends after 14 idle
-- days, at logout, and when its user's password changes (every session of the user is deleted then).
alter table users add column password_hash text;
alter table users add column password_changed_at timestamptz;

create table user_sessions (
    id uuid primary key default gen_random_uuid(),
    user_id integer not null references users (id) on delete cascade,
    token_hash text not null unique,
    csrf_hash text not null,
    created_at timestamptz not null default now(),
    last_seen_at timestamptz not null default now()
);
create index user_sessions_by_user on user_sessions (user_id);
create index user_sessions_by_last_seen on user_sessions (last_seen_at);

-- Settings applied once to a store (INIT_ADMIN_EMAIL / INIT_ADMIN_PASSWORD): a later boot never applies them again.
create table applied_settings (
    name text primary key,
    applied_at timestamptz not null default now()
);

-- A flag's change history (what the console's flag page shows, PostHog's activity log of a flag): a trigger
-- records every insert and every update that changes a field people edit, whichever code path wrote it, with the
-- fields' values before and after and the user the row names as its last modifier.
create table feature_flag_changes (
    id bigint generated always as identity primary key,
    team_id integer not null references projects (id) on delete cascade,
    flag_id integer not null references feature_flags (id) on delete cascade,
    version integer not null,
    activity text not null,
    changed_by_id integer references users (id) on delete set null,
    changes jsonb not null,
    created_at timestamptz not null default now()
);
create index feature_flag_changes_by_flag on feature_flag_changes (flag_id, id desc);

create function record_feature_flag_change() returns trigger language plpgsql as $$
declare
    fields text[] := array['key', 'name', 'filters', 'rollout_percentage', 'active', 'deleted', 'ensure_experience_continuity'];
    field text;
    before jsonb := '{}'::jsonb;
    after jsonb := to_jsonb(new);
    changes jsonb := '[]'::jsonb;
    activity text := 'created';
begin
    if tg_op = 'UPDATE' then
        before := to_jsonb(old);
        activity := case
            when new.deleted and not old.deleted then 'deleted'
            when old.deleted and not new.deleted then 'restored'
            else 'updated' end;
    end if;
    foreach field in array fields loop
        if tg_op = 'INSERT' or (before -> field) is distinct from (after -> field) then
            changes := changes || jsonb_build_array(jsonb_build_object('field', field, 'before', before -> field, 'after', after -> field));
        end if;
    end loop;
    if tg_op = 'UPDATE' and jsonb_array_length(changes) = 0 then
        return null;
    end if;
    insert into feature_flag_changes (team_id, flag_id, version, activity, changed_by_id, changes)
    values (new.team_id, new.id, new.version, activity,
            case when tg_op = 'INSERT' then new.created_by_id else coalesce(new.last_modified_by_id, new.created_by_id) end,
            changes);
    return null;
end
$$;

create trigger feature_flag_history after insert or update on feature_flags
    for each row execute function record_feature_flag_change();
