-- 014_user_state: a handler's small state per user and business number, keyed by the
-- inbox queue (a hash, never a raw identifier). The state is sealed (encrypted by the
-- serving process); it is written with a run's completion and deleted once expired.
-- Times are epoch milliseconds (BIGINT).
CREATE TABLE svc_user_state (
    queue_key TEXT COLLATE "C" PRIMARY KEY,
    phone_number_id TEXT COLLATE "C",
    sealed BYTEA NOT NULL,
    expires_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX svc_user_state_expires ON svc_user_state (expires_at);
