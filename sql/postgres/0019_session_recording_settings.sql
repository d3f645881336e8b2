-- Session replay settings of a project, as PostHog's team has them (the remote config, /flags and /decide tell
-- posthog-js what to record from them), and phog's own retention of recordings in days. Shapes of the JSON members
-- and their sizes are checked when set (src/projects/recording-settings.ts); the checks here are the last line.
alter table projects add column if not exists session_recording_opt_in boolean not null default false;
alter table projects add column if not exists session_recording_sample_rate numeric(3, 2);
alter table projects add column if not exists session_recording_minimum_duration_milliseconds integer;
alter table projects add column if not exists session_recording_linked_flag jsonb;
alter table projects add column if not exists session_recording_network_payload_capture_config jsonb;
alter table projects add column if not exists session_recording_masking_config jsonb;
alter table projects add column if not exists session_recording_url_trigger_config jsonb default '[]'::jsonb;
alter table projects add column if not exists session_recording_url_blocklist_config jsonb default '[]'::jsonb;
alter table projects add column if not exists session_recording_event_trigger_config jsonb default '[]'::jsonb;
alter table projects add column if not exists session_recording_trigger_match_type_config text;
-- PostHog's defaults: console logs and network timing are recorded once recording is on
alter table projects add column if not exists capture_console_log_opt_in boolean default true;
alter table projects add column if not exists capture_performance_opt_in boolean default true;
alter table projects add column if not exists session_recording_retention_days integer not null default 30;

alter table projects drop constraint if exists projects_session_recording_sample_rate_check;
alter table projects add constraint projects_session_recording_sample_rate_check
  check (session_recording_sample_rate between 0 and 1);
alter table projects drop constraint if exists projects_session_recording_minimum_duration_check;
alter table projects add constraint projects_session_recording_minimum_duration_check
  check (session_recording_minimum_duration_milliseconds between 0 and 30000);
alter table projects drop constraint if exists projects_session_recording_trigger_match_type_check;
alter table projects add constraint projects_session_recording_trigger_match_type_check
  check (session_recording_trigger_match_type_config in ('any', 'all'));
alter table projects drop constraint if exists projects_session_recording_retention_days_check;
alter table projects add constraint projects_session_recording_retention_days_check
  check (session_recording_retention_days between 1 and 3650);
alter table projects drop constraint if exists projects_session_recording_json_size_check;
alter table projects add constraint projects_session_recording_json_size_check check (
  coalesce(octet_length(session_recording_linked_flag::text), 0)
  + coalesce(octet_length(session_recording_network_payload_capture_config::text), 0)
  + coalesce(octet_length(session_recording_masking_config::text), 0)
  + coalesce(octet_length(session_recording_url_trigger_config::text), 0)
  + coalesce(octet_length(session_recording_url_blocklist_config::text), 0)
  + coalesce(octet_length(session_recording_event_trigger_config::text), 0) <= 262144
);
