-- +goose Up
-- Server-side sessions of the admin web UI (docs/security.md "Admin
-- sessions"). The browser holds a random 256-bit secret; only its SHA-256
-- is stored. A session belongs to the admin token that signed in: it ends
-- when that token is revoked or expires, on sign-out, after idle_until
-- without a request, and at expires_at whatever happens.
CREATE TABLE admin_sessions (
    id_hash      TEXT PRIMARY KEY,
    token_id     TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    last_seen_at TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX admin_sessions_token ON admin_sessions (token_id);
CREATE INDEX admin_sessions_expires ON admin_sessions (expires_at);

-- +goose Down
DROP TABLE admin_sessions;
