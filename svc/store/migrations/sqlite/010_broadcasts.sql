-- 010_broadcasts: paced broadcasts. A broadcast row (metadata), one row per recipient
-- (its payload kept only until it is sent or fails) and one pacing row per business number.
CREATE TABLE svc_broadcasts (
    id TEXT PRIMARY KEY,
    request_key TEXT NOT NULL UNIQUE,
    request_hash TEXT NOT NULL,
    phone_number_id TEXT NOT NULL,
    template_name TEXT,
    template_language TEXT,
    state TEXT NOT NULL,
    total INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX svc_broadcasts_template ON svc_broadcasts (template_name, state);
CREATE TABLE svc_broadcast_recipients (
    broadcast_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    recipient TEXT NOT NULL,
    state TEXT NOT NULL,
    payload_json TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_id TEXT,
    lease_expires_at INTEGER,
    next_attempt_at INTEGER NOT NULL,
    error_code TEXT,
    wa_message_id TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (broadcast_id, seq)
);
CREATE INDEX svc_broadcast_recipients_due ON svc_broadcast_recipients (state, next_attempt_at);
CREATE INDEX svc_broadcast_recipients_lease ON svc_broadcast_recipients (state, lease_expires_at);
CREATE TABLE svc_broadcast_pacing (
    phone_number_id TEXT PRIMARY KEY,
    next_send_us INTEGER NOT NULL
);
