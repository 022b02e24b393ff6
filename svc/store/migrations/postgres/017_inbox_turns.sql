-- 017_inbox_turns: claims take the due heads in turn, the order they became due
-- (svc_inbox_heads.due_at, then id): a queue whose run ended and does not go on at once
-- has its next item due from that time, behind the queues already waiting, so one long
-- queue takes turns with the others instead of going first on its oldest record time.
CREATE INDEX svc_inbox_heads_due ON svc_inbox_heads (due_at, id);
