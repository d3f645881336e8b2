-- The copy of an older install's SQLite events (DATA_DIR/events.sqlite) into this store, made once, in the
-- background, resumable: the last SQLite rowid copied, and when the copy finished.
CREATE TABLE IF NOT EXISTS sqlite_import (
    source VARCHAR PRIMARY KEY,
    last_rowid BIGINT NOT NULL,
    copied BIGINT NOT NULL,
    finished_at BIGINT
);
