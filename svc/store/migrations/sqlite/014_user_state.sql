-- 014_user_state: a handler's small state per user and business number, keyed by the
-- inbox queue (a hash, never a raw identifier). The state is sealed (encrypted by the
-- serving process); it is written with a run's completion and deleted once expired.
-- Times are epoch milliseconds (INTEGER).
CREATE TABLE svc_user_state (
    queue_key TEXT PRIMARY KEY,
    phone_number_id TEXT,
    sealed BLOB NOT NULL,
    expires_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX svc_user_state_expires ON svc_user_state (expires_at);
