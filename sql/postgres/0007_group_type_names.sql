-- Display names of group types (PostHog's name_singular / name_plural), set through the group types API.
alter table group_type_mappings add column if not exists name_singular text;
alter table group_type_mappings add column if not exists name_plural text;
