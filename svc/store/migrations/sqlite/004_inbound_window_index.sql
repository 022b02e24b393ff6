-- 004_inbound_window_index: newest inbound message per phone without a scan.
CREATE INDEX svc_messages_inbound_window ON svc_messages (direction, from_phone, created_at DESC);
