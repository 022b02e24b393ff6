-- 011_lean_message_indexes: fewer index writes per projected row; every query keeps an index.
-- The uniqueness of (direction, wa_message_id) moves to (wa_message_id, direction), which also
-- serves the lookups by wa_message_id alone, so svc_messages_wa_message_id goes; the unique
-- (wa_message_id, status, occurred_at) index serves the status events' lookups by message id,
-- so svc_message_status_events_wa goes.
CREATE UNIQUE INDEX svc_messages_wa_message_id_direction ON svc_messages (wa_message_id, direction);
DROP INDEX svc_messages_direction_wa_message_id;
DROP INDEX svc_messages_wa_message_id;
DROP INDEX svc_message_status_events_wa;
-- Each update key is written twice (recorded, then marked handled): room left on its page lets
-- the second write be a heap-only update, with no new entry in either index (PostgreSQL only).
ALTER TABLE svc_webhook_updates SET (fillfactor = 50);
