-- Sign-in attempts counted before the password is checked, shared by every process on this Postgres: one row per
-- email ("email:<address>") and per client address ("ip:<address>"), a fixed window and the attempts taken in it.
-- An attempt is taken by an upsert that returns the new count (so no race lets more than the limit be checked) and
-- given back when the password was right or the attempt was refused. Rows whose window is over are swept.
create table login_attempts (
    subject text primary key,
    window_started_at timestamptz not null default now(),
    attempts integer not null
);
create index login_attempts_by_window on login_attempts (window_started_at);
