-- Key management: the project token is public by design (it ships in every web page), so it is kept in clear and
-- shown as api_token. Rows created before this migration only have the hash: their token is filled in the first
-- time a request presents it (api_token stays null until then). Personal keys gain PostHog's scopes and roll time.
alter table projects add column api_token text unique;

alter table personal_api_keys add column scopes text[] not null default '{*}';
alter table personal_api_keys add column scoped_teams integer[];
alter table personal_api_keys add column scoped_organizations text[];
alter table personal_api_keys add column last_rolled_at timestamptz;
create index personal_api_keys_by_user_created on personal_api_keys (user_id, created_at desc);

-- One row whose version every token reset and key revocation or roll bumps: other processes compare it every
-- second (and hear NOTIFY key_changes on real Postgres) and drop what they cached.
create table key_changes (
    id smallint primary key default 1 check (id = 1),
    version bigint not null default 0
);
insert into key_changes (id, version) values (1, 0);
