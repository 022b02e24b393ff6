-- 018_inbox_lean_indexes: since claims read svc_inbox_heads (016, 017), no query reads
-- svc_inbox by (status, next_attempt_at), and by status only the pruning of old dead letters
-- and a settlement's release of the items its run took (consumed) do: each gets a partial
-- index of its own rows, so an item's record, claim and completion write neither.
DROP INDEX svc_inbox_due;
DROP INDEX svc_inbox_updated;
CREATE INDEX svc_inbox_dead ON svc_inbox (updated_at) WHERE status = 'dead';
CREATE INDEX svc_inbox_consumed ON svc_inbox (queue_key) WHERE status = 'consumed';
