-- 003_message_projection: message metadata (never text) and the status-event log.
CREATE TABLE svc_messages (
    row_id TEXT COLLATE "C" PRIMARY KEY,
    wa_message_id TEXT NOT NULL,
    direction TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    from_phone TEXT,
    to_phone TEXT,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    graph_message_id TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX svc_messages_list ON svc_messages (created_at DESC, row_id DESC);
CREATE INDEX svc_messages_wa_message_id ON svc_messages (wa_message_id);
CREATE TABLE svc_message_status_events (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    wa_message_id TEXT NOT NULL,
    status TEXT NOT NULL,
    occurred_at BIGINT NOT NULL
);
CREATE INDEX svc_message_status_events_wa ON svc_message_status_events (wa_message_id, occurred_at, id);
