-- 011_lean_message_indexes: fewer B-trees written per projected row. The unique key on
-- (direction, wa_message_id) becomes (wa_message_id, direction), so it also serves every
-- lookup by message id alone and the plain wa_message_id index goes; the status log's
-- (wa_message_id, occurred_at, id) index goes too, its reads served by the unique
-- (wa_message_id, status, occurred_at) key (a message has a handful of events to sort).
-- The window indexes become partial: a row enters only those whose column it has (an
-- inbound row has no outbound recipient; most rows have no parent BSUID). Every query
-- that used them names the column with = or IN, which implies the index's condition.
CREATE UNIQUE INDEX svc_messages_wa_message_id_direction ON svc_messages (wa_message_id, direction);
DROP INDEX svc_messages_direction_wa_message_id;
DROP INDEX svc_messages_wa_message_id;
DROP INDEX svc_message_status_events_wa;
DROP INDEX svc_messages_inbound_window;
CREATE INDEX svc_messages_inbound_window ON svc_messages (direction, from_phone, created_at DESC)
    WHERE from_phone IS NOT NULL;
DROP INDEX svc_messages_user_window;
CREATE INDEX svc_messages_user_window ON svc_messages (direction, user_id, created_at DESC)
    WHERE user_id IS NOT NULL;
DROP INDEX svc_messages_parent_user_window;
CREATE INDEX svc_messages_parent_user_window
    ON svc_messages (direction, parent_user_id, created_at DESC)
    WHERE parent_user_id IS NOT NULL;
DROP INDEX svc_messages_outbound_to;
CREATE INDEX svc_messages_outbound_to ON svc_messages (to_phone, created_at DESC)
    WHERE direction = 'outbound';
