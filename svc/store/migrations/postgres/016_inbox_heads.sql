-- 016_inbox_heads: the head of each queue, kept by triggers in the transaction of every
-- change to svc_inbox, so a claim reads the due heads by index whatever a queue's depth.
-- One row per queue with a row not dead: its head (the lowest such id, the row's id here)
-- and when the head is claimable (due_at): pending -> next_attempt_at, running -> its
-- lease's expiry, each pushed back to the latest live lease of a later running or dropping
-- row of the queue (it blocks the queue); NULL: never by a claim (a consumed or dropping
-- head). Times are epoch milliseconds.
CREATE TABLE svc_inbox_heads (
    id BIGINT PRIMARY KEY,
    queue_key TEXT COLLATE "C" NOT NULL UNIQUE,
    due_at BIGINT
);
-- The running and dropping rows of a queue: the leases that block it.
CREATE INDEX svc_inbox_leased ON svc_inbox (queue_key, id)
    WHERE status IN ('running', 'dropping');
-- The dropped rows a claim deletes once their lease lapsed.
CREATE INDEX svc_inbox_dropping ON svc_inbox (lease_expires_at) WHERE status = 'dropping';
-- Recompute one queue's row under its lock: a change to the queue by another transaction
-- commits before the lock is granted and the statements after it see it (READ COMMITTED,
-- a fresh snapshot per statement). The head is looked for from the row's head or ``start``
-- (the lowest id the statement changed), whichever is lower: no row before it is alive,
-- so the index entries of rows deleted and not yet vacuumed are never walked again. A
-- queue left empty loses its row only while no record is inserting into it (the record
-- holds the queue's advisory lock, namespace 0x5C5C as svc.store._session's
-- ADVISORY_NAMESPACE, and skipped the row it saw); else its row stays, due at once, and the
-- claim that takes it recomputes it.
CREATE FUNCTION svc_inbox_heads_refresh(q TEXT, start BIGINT) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    kept BIGINT;
    head RECORD;
    blocked BIGINT;
BEGIN
    SELECT id INTO kept FROM svc_inbox_heads WHERE queue_key = q FOR UPDATE;
    SELECT id, status, next_attempt_at, lease_expires_at INTO head FROM svc_inbox
        WHERE queue_key = q AND id >= LEAST(start, kept) AND status <> 'dead'
        ORDER BY id LIMIT 1;
    IF NOT FOUND THEN
        IF pg_try_advisory_xact_lock(23644, hashtext('inbox:' || q)) THEN
            DELETE FROM svc_inbox_heads WHERE queue_key = q;
        ELSE
            UPDATE svc_inbox_heads SET due_at = 0 WHERE queue_key = q;
        END IF;
        RETURN;
    END IF;
    SELECT MAX(lease_expires_at) INTO blocked FROM svc_inbox
        WHERE queue_key = q AND status IN ('running', 'dropping') AND id > head.id;
    -- A fold moved the head here from a queue whose row still names it (refreshed next).
    DELETE FROM svc_inbox_heads WHERE id = head.id AND queue_key <> q;
    INSERT INTO svc_inbox_heads (id, queue_key, due_at) VALUES (head.id, q,
        CASE head.status WHEN 'pending' THEN GREATEST(head.next_attempt_at, blocked)
            WHEN 'running' THEN GREATEST(head.lease_expires_at, blocked) END)
        ON CONFLICT (queue_key) DO UPDATE SET id = excluded.id, due_at = excluded.due_at;
END
$$;
-- Once per statement (a completion's consumed rows, a fold's moved rows: each queue once,
-- in key order). A pending row inserted comes after every row of its queue (the queue's
-- advisory lock, held by the record, orders it): it is the head of an empty one.
CREATE FUNCTION svc_inbox_heads_follow() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    q TEXT;
    start BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO svc_inbox_heads (id, queue_key, due_at)
            SELECT DISTINCT ON (queue_key) id, queue_key, next_attempt_at FROM new_rows
            WHERE status = 'pending' ORDER BY queue_key, id ON CONFLICT DO NOTHING;
        FOR q, start IN SELECT queue_key, MIN(id) FROM new_rows WHERE status <> 'pending'
            GROUP BY queue_key ORDER BY queue_key LOOP
            PERFORM svc_inbox_heads_refresh(q, start);
        END LOOP;
    ELSIF TG_OP = 'DELETE' THEN
        FOR q, start IN SELECT queue_key, MIN(id) FROM old_rows WHERE status <> 'dead'
            GROUP BY queue_key ORDER BY queue_key LOOP
            PERFORM svc_inbox_heads_refresh(q, start);
        END LOOP;
    ELSE
        FOR q, start IN SELECT k, MIN(i) FROM (
                SELECT o.queue_key, o.id FROM old_rows AS o JOIN new_rows AS n ON n.id = o.id
                WHERE (o.status, o.next_attempt_at, o.lease_expires_at, o.queue_key)
                    IS DISTINCT FROM (n.status, n.next_attempt_at, n.lease_expires_at,
                    n.queue_key)
                UNION ALL
                SELECT n.queue_key, n.id FROM old_rows AS o JOIN new_rows AS n ON n.id = o.id
                WHERE n.queue_key <> o.queue_key
            ) AS changed (k, i) GROUP BY k ORDER BY k LOOP
            PERFORM svc_inbox_heads_refresh(q, start);
        END LOOP;
    END IF;
    RETURN NULL;
END
$$;
INSERT INTO svc_inbox_heads (id, queue_key, due_at)
    SELECT i.id, i.queue_key, CASE i.status
        WHEN 'pending' THEN GREATEST(i.next_attempt_at, b.until)
        WHEN 'running' THEN GREATEST(i.lease_expires_at, b.until) END
    FROM svc_inbox AS i
    LEFT JOIN LATERAL (SELECT MAX(r.lease_expires_at) AS until FROM svc_inbox AS r
        WHERE r.queue_key = i.queue_key AND r.status IN ('running', 'dropping')
        AND r.id > i.id) AS b ON true
    WHERE i.status <> 'dead' AND NOT EXISTS (SELECT 1 FROM svc_inbox AS e
        WHERE e.queue_key = i.queue_key AND e.id < i.id AND e.status <> 'dead');
-- One block: a CREATE TRIGGER without a body would not end where the migration runner
-- splits statements (it follows SQLite's trigger grammar).
DO $$
BEGIN
    CREATE TRIGGER svc_inbox_heads_insert AFTER INSERT ON svc_inbox
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION svc_inbox_heads_follow();
    CREATE TRIGGER svc_inbox_heads_update AFTER UPDATE ON svc_inbox
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION svc_inbox_heads_follow();
    CREATE TRIGGER svc_inbox_heads_delete AFTER DELETE ON svc_inbox
        REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION svc_inbox_heads_follow();
END
$$;
