-- 007_user_identity: the user's business-scoped ids on the projection (NULL on older rows),
-- their window indexes, and the identity map (phone, BSUID, parent BSUID, username).
ALTER TABLE svc_messages ADD COLUMN user_id TEXT;
ALTER TABLE svc_messages ADD COLUMN parent_user_id TEXT;
CREATE INDEX svc_messages_user_window ON svc_messages (direction, user_id, created_at DESC);
CREATE INDEX svc_messages_parent_user_window ON svc_messages (direction, parent_user_id, created_at DESC);
CREATE INDEX svc_messages_outbound_to ON svc_messages (direction, to_phone, created_at DESC);
CREATE TABLE svc_user_identities (
    identity_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id TEXT,
    parent_user_id TEXT,
    wa_id TEXT,
    username TEXT,
    last_seen_at BIGINT NOT NULL,
    CHECK (user_id IS NOT NULL OR wa_id IS NOT NULL)
);
CREATE UNIQUE INDEX svc_user_identities_user_id ON svc_user_identities (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX svc_user_identities_wa_id ON svc_user_identities (wa_id, last_seen_at DESC);
CREATE INDEX svc_user_identities_parent ON svc_user_identities (parent_user_id);
