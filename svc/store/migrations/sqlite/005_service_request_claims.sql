-- 005_service_request_claims: durable claim (pending) and completion columns.
ALTER TABLE svc_service_requests ADD COLUMN state TEXT NOT NULL DEFAULT 'completed';
ALTER TABLE svc_service_requests ADD COLUMN completed_at INTEGER;
UPDATE svc_service_requests SET state = 'pending' WHERE response_json IS NULL;
UPDATE svc_service_requests SET completed_at = created_at WHERE state = 'completed';
