-- 013_inbox: the durable inbox of the handler runtime. One row per recorded update a handler
-- runs: its update key, its queue (a hash, never a raw identifier), the update sealed
-- (encrypted by the serving process) and its run state. Only the head of a queue (its
-- lowest id not dead) is claimed. A row is deleted when its run succeeds; a dead row is
-- kept until the dead-letter horizon. Times are epoch milliseconds (BIGINT).
CREATE TABLE svc_inbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    update_key TEXT COLLATE "C" NOT NULL UNIQUE,
    queue_key TEXT COLLATE "C" NOT NULL,
    phone_number_id TEXT COLLATE "C",
    kind TEXT NOT NULL,
    sealed BYTEA NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    lease_id TEXT,
    lease_expires_at BIGINT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX svc_inbox_queue ON svc_inbox (queue_key, id);
CREATE INDEX svc_inbox_due ON svc_inbox (status, next_attempt_at);
CREATE INDEX svc_inbox_updated ON svc_inbox (status, updated_at);
