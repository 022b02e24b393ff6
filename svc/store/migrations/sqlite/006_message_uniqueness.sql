-- 006_message_uniqueness: keep one row per (direction, wa_message_id): the best status
-- rank (read 3 > delivered 2 > sent 1 > anything else 0), then the smallest row id.
DELETE FROM svc_messages WHERE row_id IN (
    SELECT row_id FROM (
        SELECT row_id, ROW_NUMBER() OVER (
            PARTITION BY direction, wa_message_id
            ORDER BY CASE status
                WHEN 'read' THEN 3 WHEN 'delivered' THEN 2 WHEN 'sent' THEN 1 ELSE 0
            END DESC, row_id ASC
        ) AS position
        FROM svc_messages
    ) AS ranked WHERE position > 1
);
DELETE FROM svc_message_status_events WHERE id IN (
    SELECT id FROM (
        SELECT id, ROW_NUMBER() OVER (
            PARTITION BY wa_message_id, status, occurred_at ORDER BY id
        ) AS position
        FROM svc_message_status_events
    ) AS ranked WHERE position > 1
);
CREATE UNIQUE INDEX svc_messages_direction_wa_message_id ON svc_messages (direction, wa_message_id);
CREATE UNIQUE INDEX svc_message_status_events_unique
    ON svc_message_status_events (wa_message_id, status, occurred_at);
