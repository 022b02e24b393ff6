-- 016_inbox_heads: the head of each queue, kept by triggers in the transaction of every
-- change to svc_inbox, so a claim reads the due heads by index whatever a queue's depth.
-- One row per queue with a row not dead: its head (the lowest such id, the row's id here)
-- and when the head is claimable (due_at): pending -> next_attempt_at, running -> its
-- lease's expiry, each pushed back to the latest live lease of a later running or dropping
-- row of the queue (it blocks the queue); NULL: never by a claim (a consumed or dropping
-- head). Times are epoch milliseconds.
CREATE TABLE svc_inbox_heads (
    id INTEGER PRIMARY KEY,
    queue_key TEXT NOT NULL UNIQUE,
    due_at INTEGER
);
-- The running and dropping rows of a queue: the leases that block it.
CREATE INDEX svc_inbox_leased ON svc_inbox (queue_key, id)
    WHERE status IN ('running', 'dropping');
-- The dropped rows a claim deletes once their lease lapsed.
CREATE INDEX svc_inbox_dropping ON svc_inbox (lease_expires_at) WHERE status = 'dropping';
INSERT INTO svc_inbox_heads (id, queue_key, due_at)
    SELECT i.id, i.queue_key, CASE i.status WHEN 'pending' THEN i.next_attempt_at
        WHEN 'running' THEN i.lease_expires_at END
    FROM svc_inbox AS i WHERE i.status <> 'dead' AND NOT EXISTS (SELECT 1 FROM svc_inbox AS e
        WHERE e.queue_key = i.queue_key AND e.id < i.id AND e.status <> 'dead');
UPDATE svc_inbox_heads SET due_at = max(due_at, COALESCE((SELECT MAX(r.lease_expires_at)
    FROM svc_inbox AS r WHERE r.queue_key = svc_inbox_heads.queue_key
    AND r.status IN ('running', 'dropping') AND r.id > svc_inbox_heads.id), due_at))
    WHERE due_at IS NOT NULL;
-- Recompute one queue's row: an insert into this view runs it (SQLite's triggers call no
-- functions). ``moved``: the id of a row a fold moved into the queue, whose old queue's row
-- may still name it (that row goes; its own recompute follows), else NULL.
CREATE VIEW svc_inbox_heads_refresh (queue_key, moved) AS SELECT NULL, NULL;
CREATE TRIGGER svc_inbox_heads_refresh INSTEAD OF INSERT ON svc_inbox_heads_refresh BEGIN
    DELETE FROM svc_inbox_heads WHERE queue_key = NEW.queue_key OR id = NEW.moved;
    INSERT INTO svc_inbox_heads (id, queue_key, due_at)
        SELECT id, queue_key, CASE status WHEN 'pending' THEN next_attempt_at
            WHEN 'running' THEN lease_expires_at END
        FROM svc_inbox WHERE queue_key = NEW.queue_key AND status <> 'dead' ORDER BY id LIMIT 1;
    UPDATE svc_inbox_heads SET due_at = max(due_at, COALESCE((SELECT MAX(r.lease_expires_at)
        FROM svc_inbox AS r WHERE r.queue_key = NEW.queue_key
        AND r.status IN ('running', 'dropping') AND r.id > svc_inbox_heads.id), due_at))
        WHERE queue_key = NEW.queue_key AND due_at IS NOT NULL;
END;
-- A pending row inserted comes after every row of its queue: it is the head of an empty one.
CREATE TRIGGER svc_inbox_heads_insert AFTER INSERT ON svc_inbox
WHEN NEW.status = 'pending' BEGIN
    INSERT INTO svc_inbox_heads (id, queue_key, due_at)
        SELECT NEW.id, NEW.queue_key, NEW.next_attempt_at WHERE NOT EXISTS
        (SELECT 1 FROM svc_inbox_heads WHERE queue_key = NEW.queue_key);
END;
CREATE TRIGGER svc_inbox_heads_insert_other AFTER INSERT ON svc_inbox
WHEN NEW.status <> 'pending' BEGIN
    INSERT INTO svc_inbox_heads_refresh VALUES (NEW.queue_key, NULL);
END;
CREATE TRIGGER svc_inbox_heads_update
AFTER UPDATE OF status, next_attempt_at, lease_expires_at, queue_key ON svc_inbox
WHEN OLD.status IS NOT NEW.status OR OLD.next_attempt_at IS NOT NEW.next_attempt_at
    OR OLD.lease_expires_at IS NOT NEW.lease_expires_at OR OLD.queue_key IS NOT NEW.queue_key
BEGIN
    INSERT INTO svc_inbox_heads_refresh VALUES (OLD.queue_key, NULL);
END;
-- A fold moved the row: its new queue too.
CREATE TRIGGER svc_inbox_heads_move AFTER UPDATE OF queue_key ON svc_inbox
WHEN OLD.queue_key IS NOT NEW.queue_key BEGIN
    INSERT INTO svc_inbox_heads_refresh VALUES (NEW.queue_key, NEW.id);
END;
CREATE TRIGGER svc_inbox_heads_delete AFTER DELETE ON svc_inbox
WHEN OLD.status <> 'dead' BEGIN
    INSERT INTO svc_inbox_heads_refresh VALUES (OLD.queue_key, NULL);
END;
