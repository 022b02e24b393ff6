-- 013_inbox: the durable inbox of the handler runtime. One row per recorded update a handler
-- runs: its update key, its queue (a hash, never a raw identifier), the update sealed
-- (encrypted by the serving process) and its run state. Only the head of a queue (its
-- lowest id not dead) is claimed. A row is deleted when its run succeeds; a dead row is
-- kept until the dead-letter horizon. Times are epoch milliseconds (INTEGER); ids are
-- never reused (AUTOINCREMENT), so an id names one item for its whole life.
CREATE TABLE svc_inbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    update_key TEXT NOT NULL UNIQUE,
    queue_key TEXT NOT NULL,
    phone_number_id TEXT,
    kind TEXT NOT NULL,
    sealed BLOB NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_id TEXT,
    lease_expires_at INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX svc_inbox_queue ON svc_inbox (queue_key, id);
CREATE INDEX svc_inbox_due ON svc_inbox (status, next_attempt_at);
CREATE INDEX svc_inbox_updated ON svc_inbox (status, updated_at);
