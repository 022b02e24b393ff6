-- 009_delivery_guarantees: per-update dedupe keys with their dispatch claim and completion,
-- the status of a stored refusal, the outbox's last error (dead items keep it), and the
-- indexes retention prunes by. Times are epoch milliseconds.
ALTER TABLE svc_service_requests ADD COLUMN response_status INTEGER;
ALTER TABLE svc_outbox ADD COLUMN last_error TEXT;
CREATE TABLE svc_webhook_updates (
    update_key TEXT PRIMARY KEY,
    event_key TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    claimed_at BIGINT NOT NULL,
    handled_at BIGINT
);
CREATE INDEX svc_webhook_updates_received ON svc_webhook_updates (received_at);
CREATE INDEX svc_webhook_events_received ON svc_webhook_events (received_at);
CREATE INDEX svc_service_requests_done ON svc_service_requests (state, completed_at);
CREATE INDEX svc_outbox_finished ON svc_outbox (status, updated_at);
CREATE INDEX svc_message_status_events_occurred ON svc_message_status_events (occurred_at);
