-- Flags keep their tags (a PostHog flag export carries them): stored as PostHog's tagify leaves them (trimmed,
-- lower-cased, unique), returned sorted.
alter table feature_flags add column if not exists tags text[] not null default '{}';
