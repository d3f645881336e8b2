-- The project's timezone (IANA name) and first day of the week: insights bucket, label and resolve relative dates
-- in them. Names are checked against the runtime's list when set (src/projects/settings.ts), not here, so that a
-- zone added by a newer runtime needs no migration.
alter table projects add column if not exists timezone text not null default 'UTC';
alter table projects add column if not exists week_start_day smallint not null default 0;
alter table projects drop constraint if exists projects_week_start_day_check;
alter table projects add constraint projects_week_start_day_check check (week_start_day in (0, 1));
alter table projects drop constraint if exists projects_timezone_length_check;
alter table projects add constraint projects_timezone_length_check check (length(timezone) between 1 and 64);
