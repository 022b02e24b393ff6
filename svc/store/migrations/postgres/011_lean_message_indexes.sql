-- 011_lean_message_indexes: fewer B-trees written per projected row. The unique key on
-- (direction, wa_message_id) becomes (wa_message_id, direction), so it also serves every
-- lookup by message id alone and the plain wa_message_id index goes; the status log's
-- (wa_message_id, occurred_at, id) index goes too, its reads served by the unique
-- (wa_message_id, status, occurred_at) key (a message has a handful of events to sort).
CREATE UNIQUE INDEX svc_messages_wa_message_id_direction ON svc_messages (wa_message_id, direction);
DROP INDEX svc_messages_direction_wa_message_id;
DROP INDEX svc_messages_wa_message_id;
DROP INDEX svc_message_status_events_wa;
