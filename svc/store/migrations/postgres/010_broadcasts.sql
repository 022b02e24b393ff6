-- 010_broadcasts: paced broadcasts. A broadcast row (metadata), one row per recipient
-- (its payload kept only until it is sent or fails) and one pacing row per business number.
CREATE TABLE svc_broadcasts (
    id TEXT COLLATE "C" PRIMARY KEY,
    request_key TEXT COLLATE "C" NOT NULL UNIQUE,
    request_hash TEXT NOT NULL,
    phone_number_id TEXT COLLATE "C" NOT NULL,
    template_name TEXT,
    template_language TEXT,
    state TEXT NOT NULL,
    total BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX svc_broadcasts_template ON svc_broadcasts (template_name, state);
CREATE TABLE svc_broadcast_recipients (
    broadcast_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    recipient TEXT COLLATE "C" NOT NULL,
    state TEXT NOT NULL,
    payload_json TEXT,
    attempts BIGINT NOT NULL DEFAULT 0,
    lease_id TEXT,
    lease_expires_at BIGINT,
    next_attempt_at BIGINT NOT NULL,
    error_code TEXT,
    wa_message_id TEXT,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (broadcast_id, seq)
);
CREATE INDEX svc_broadcast_recipients_due ON svc_broadcast_recipients (state, next_attempt_at);
CREATE INDEX svc_broadcast_recipients_lease ON svc_broadcast_recipients (state, lease_expires_at);
CREATE TABLE svc_broadcast_pacing (
    phone_number_id TEXT COLLATE "C" PRIMARY KEY,
    next_send_us BIGINT NOT NULL
);
