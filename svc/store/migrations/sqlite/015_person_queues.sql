-- 015_person_queues: one queue per person. A fold moves a queue's rows and state under
-- the person's key: a moved row remembers the key its run was claimed under
-- (folded_from, cleared by the next claim), a moved state the key it was sealed under
-- (sealed_for; NULL: its own queue_key). The number index lists the numbers a fold visits.
ALTER TABLE svc_inbox ADD COLUMN folded_from TEXT;
CREATE INDEX svc_inbox_folded ON svc_inbox (folded_from) WHERE folded_from IS NOT NULL;
ALTER TABLE svc_user_state ADD COLUMN sealed_for TEXT;
CREATE INDEX svc_user_state_number ON svc_user_state (phone_number_id);
