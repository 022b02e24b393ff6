-- 018_inbox_lean_indexes: since claims read svc_inbox_heads (016, 017), no query reads
-- svc_inbox by (status, next_attempt_at), and only the pruning of old dead letters reads it
-- by (status, updated_at): the first goes, the second keeps the dead rows only, so an
-- item's record, claim and completion no longer write either index.
DROP INDEX svc_inbox_due;
DROP INDEX svc_inbox_updated;
CREATE INDEX svc_inbox_dead ON svc_inbox (updated_at) WHERE status = 'dead';
