-- 011_lean_message_indexes: fewer index writes per projected row; every query keeps an index.
-- The uniqueness of (direction, wa_message_id) moves to (wa_message_id, direction), which also
-- serves the lookups by wa_message_id alone, so svc_messages_wa_message_id goes; the unique
-- (wa_message_id, status, occurred_at) index serves the status events' lookups by message id,
-- so svc_message_status_events_wa goes.
CREATE UNIQUE INDEX svc_messages_wa_message_id_direction ON svc_messages (wa_message_id, direction);
DROP INDEX svc_messages_direction_wa_message_id;
DROP INDEX svc_messages_wa_message_id;
DROP INDEX svc_message_status_events_wa;
-- The window indexes become partial: a row enters only those of its direction whose column
-- it has (a row has one direction; most rows have no parent BSUID). Every query on them names
-- the column with = or IN (and the phone windows their direction), which implies the condition.
DROP INDEX svc_messages_inbound_window;
CREATE INDEX svc_messages_inbound_window ON svc_messages (from_phone, created_at DESC)
    WHERE direction = 'inbound' AND from_phone IS NOT NULL;
DROP INDEX svc_messages_outbound_to;
CREATE INDEX svc_messages_outbound_to ON svc_messages (to_phone, created_at DESC)
    WHERE direction = 'outbound' AND to_phone IS NOT NULL;
DROP INDEX svc_messages_user_window;
CREATE INDEX svc_messages_user_window ON svc_messages (direction, user_id, created_at DESC)
    WHERE user_id IS NOT NULL;
DROP INDEX svc_messages_parent_user_window;
CREATE INDEX svc_messages_parent_user_window
    ON svc_messages (direction, parent_user_id, created_at DESC)
    WHERE parent_user_id IS NOT NULL;
-- Each update key is written twice (recorded, then marked handled): room left on its page lets
-- the second write be a heap-only update, with no new entry in either index (PostgreSQL only).
ALTER TABLE svc_webhook_updates SET (fillfactor = 50);
