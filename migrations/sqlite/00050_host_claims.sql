-- +goose Up
-- A host claim: someone asked to prove control of a host by serving a
-- token at https://{host}/.well-known/cardex-claim/{token} (docs/claims.md).
-- The token is a public challenge, not a secret: it is stored as issued so
-- the URL can be rebuilt at verification. verified_at is set once, by a
-- conditional update, so one claim yields at most one publisher token.
CREATE TABLE host_claims (
    id          TEXT PRIMARY KEY,
    host        TEXT NOT NULL, -- host[:port] where the token is served
    scope_host  TEXT NOT NULL, -- the host name publisher tokens are scoped to
    scheme      TEXT NOT NULL,
    token       TEXT NOT NULL,
    created_at  DATETIME NOT NULL,
    expires_at  DATETIME NOT NULL,
    verified_at DATETIME,
    token_id    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX host_claims_expires ON host_claims (expires_at);

-- The claim a publisher token was issued for ('' for tokens made by an
-- admin), and the token an agent was submitted with ('' for anonymous and
-- admin submissions): --auto-approve claimed approves only agents whose
-- submitter holds a live token from a verified claim.
ALTER TABLE tokens ADD COLUMN claim_id TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN submitter_token_id TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agents DROP COLUMN submitter_token_id;
ALTER TABLE tokens DROP COLUMN claim_id;
DROP TABLE host_claims;
