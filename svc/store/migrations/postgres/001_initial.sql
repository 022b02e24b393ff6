-- 001_initial: migration bookkeeping, webhook event keys, service requests, outbox.
-- Times are epoch milliseconds (BIGINT). Checksum frozen: never edit.
CREATE TABLE IF NOT EXISTS svc_schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS svc_persistence_lock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    owner TEXT NOT NULL,
    acquired_at BIGINT NOT NULL
);
CREATE TABLE svc_webhook_events (
    event_key TEXT PRIMARY KEY,
    event_hash TEXT NOT NULL,
    received_at BIGINT NOT NULL
);
CREATE TABLE svc_service_requests (
    idempotency_key TEXT PRIMARY KEY,
    request_hash TEXT NOT NULL,
    response_json TEXT,
    created_at BIGINT NOT NULL
);
CREATE TABLE svc_outbox (
    id TEXT COLLATE "C" PRIMARY KEY,
    payload_hash TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    lease_expires_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX svc_outbox_due ON svc_outbox (status, next_attempt_at);
CREATE INDEX svc_outbox_lease ON svc_outbox (status, lease_expires_at);
