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
