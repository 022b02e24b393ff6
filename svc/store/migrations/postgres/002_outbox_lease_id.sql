-- 002_outbox_lease_id: the lease that fences completion to the current claim.
ALTER TABLE svc_outbox ADD COLUMN lease_id TEXT;
