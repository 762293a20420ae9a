-- +goose Up
-- Single sign-on with an OpenID Connect provider (docs/identity.md).
--
-- A web session may belong to a person the provider signed in instead of
-- an admin token: token_id is then empty and the session keeps who the
-- person is and what the provider's groups granted at sign-in (role,
-- hosts, groups), so a change at the provider takes effect at the next
-- sign-in and never outlives the session's expires_at. id_token_hint is
-- the ID token of the sign-in, sent back to the provider's end-session
-- endpoint at sign-out (some providers require it).
ALTER TABLE admin_sessions ADD COLUMN role TEXT NOT NULL DEFAULT '';
ALTER TABLE admin_sessions ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE admin_sessions ADD COLUMN hosts TEXT NOT NULL DEFAULT '[]';
ALTER TABLE admin_sessions ADD COLUMN member_groups TEXT NOT NULL DEFAULT '[]';
ALTER TABLE admin_sessions ADD COLUMN subject TEXT NOT NULL DEFAULT '';
ALTER TABLE admin_sessions ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
ALTER TABLE admin_sessions ADD COLUMN id_token_hint TEXT NOT NULL DEFAULT '';

-- A sign-in under way: the state, nonce and PKCE verifier that travel
-- through the provider's redirect, found by the SHA-256 of the random
-- secret in the browser's short-lived cookie and deleted when the callback
-- takes them, so a replayed callback finds nothing.
CREATE TABLE oidc_sign_ins (
    id_hash    TEXT PRIMARY KEY,
    state      TEXT NOT NULL,
    nonce      TEXT NOT NULL,
    verifier   TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX oidc_sign_ins_expires ON oidc_sign_ins (expires_at);

-- Who did a curation action when a person signed in with the provider:
-- the stable subject and the email or name it gave (the audit log's actor
-- filter matches them as it matches a token's id and name).
ALTER TABLE audit_log ADD COLUMN actor_subject TEXT NOT NULL DEFAULT '';
ALTER TABLE audit_log ADD COLUMN actor_display TEXT NOT NULL DEFAULT '';
CREATE INDEX audit_log_subject ON audit_log (actor_subject, seq);

-- +goose Down
DROP INDEX audit_log_subject;
ALTER TABLE audit_log DROP COLUMN actor_display;
ALTER TABLE audit_log DROP COLUMN actor_subject;
DROP TABLE oidc_sign_ins;
ALTER TABLE admin_sessions DROP COLUMN id_token_hint;
ALTER TABLE admin_sessions DROP COLUMN display_name;
ALTER TABLE admin_sessions DROP COLUMN subject;
ALTER TABLE admin_sessions DROP COLUMN member_groups;
ALTER TABLE admin_sessions DROP COLUMN hosts;
ALTER TABLE admin_sessions DROP COLUMN name;
ALTER TABLE admin_sessions DROP COLUMN role;
