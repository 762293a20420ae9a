-- +goose Up
-- Timestamps are written by the store as UTC text in one fixed layout, so
-- comparisons in SQL (due selection, keyset pages) order correctly.
CREATE TABLE agents (
    id                    TEXT PRIMARY KEY,
    card_url              TEXT NOT NULL UNIQUE, -- normalized (docs/api.md "Agent identity"); backs docs/threats.md A.6
    fetched_url           TEXT NOT NULL DEFAULT '',
    host                  TEXT NOT NULL,
    bare_host             BOOLEAN NOT NULL DEFAULT 0,
    status                TEXT NOT NULL,
    visibility            TEXT NOT NULL,
    health                TEXT NOT NULL,
    trust                 TEXT NOT NULL,
    needs_review          BOOLEAN NOT NULL DEFAULT 0,
    name                  TEXT NOT NULL DEFAULT '',
    last_fetched_at       DATETIME,
    last_changed_at       DATETIME,
    last_success_at       DATETIME,
    failing_since         DATETIME,
    consecutive_failures  INTEGER NOT NULL DEFAULT 0,
    consecutive_missing   INTEGER NOT NULL DEFAULT 0,
    etag                  TEXT NOT NULL DEFAULT '',
    last_modified         TEXT NOT NULL DEFAULT '',
    next_fetch_at         DATETIME NOT NULL,
    lease_owner           TEXT NOT NULL DEFAULT '',
    lease_until           DATETIME,
    pinned_keys           TEXT,
    verified_thumbprints  TEXT NOT NULL DEFAULT '[]',
    current_version_seq   INTEGER NOT NULL DEFAULT 0,
    candidate_version_seq INTEGER NOT NULL DEFAULT 0,
    latest_version_seq    INTEGER NOT NULL DEFAULT 0,
    last_error_class      TEXT NOT NULL DEFAULT '',
    last_error_status     INTEGER NOT NULL DEFAULT 0,
    last_error_message    TEXT NOT NULL DEFAULT '',
    last_error_at         DATETIME,
    created_at            DATETIME NOT NULL,
    updated_at            DATETIME NOT NULL
);
CREATE INDEX agents_due ON agents (next_fetch_at, id);
CREATE INDEX agents_host_lease ON agents (host, lease_until);
CREATE INDEX agents_updated ON agents (updated_at, id);
CREATE INDEX agents_name ON agents (name, id);
CREATE INDEX agents_status ON agents (status, visibility, health);

CREATE TABLE card_versions (
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL,
    raw              BLOB NOT NULL,
    sha256           TEXT NOT NULL,
    fetched_at       DATETIME NOT NULL,
    fetched_url      TEXT NOT NULL,
    protocol_version TEXT NOT NULL DEFAULT '',
    trust            TEXT NOT NULL,
    verdict          TEXT NOT NULL DEFAULT '{}',
    problems         TEXT NOT NULL DEFAULT '[]',
    card             TEXT NOT NULL DEFAULT 'null',
    diff             TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (agent_id, seq)
);

CREATE TABLE fetch_attempts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id    TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    at          DATETIME NOT NULL,
    url         TEXT NOT NULL,
    http_status INTEGER NOT NULL DEFAULT 0,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    bytes       INTEGER NOT NULL DEFAULT 0,
    error_class TEXT NOT NULL DEFAULT '',
    message     TEXT NOT NULL DEFAULT '',
    result      TEXT NOT NULL
);
CREATE INDEX fetch_attempts_agent ON fetch_attempts (agent_id, id);

CREATE TABLE tokens (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    role         TEXT NOT NULL,
    hosts        TEXT NOT NULL DEFAULT '[]',
    hash         TEXT NOT NULL,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME,
    expires_at   DATETIME,
    revoked_at   DATETIME
);

CREATE TABLE audit_log (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    at             DATETIME NOT NULL,
    actor_token_id TEXT NOT NULL DEFAULT '',
    actor_name     TEXT NOT NULL DEFAULT '',
    action         TEXT NOT NULL,
    agent_id       TEXT NOT NULL DEFAULT '',
    reason         TEXT NOT NULL DEFAULT '',
    detail         TEXT NOT NULL DEFAULT '{}'
);

-- AUTOINCREMENT: a sequence number is never reused, even after the newest
-- row is gone, so change-log followers never see a seq twice.
CREATE TABLE changes (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id TEXT NOT NULL,
    kind     TEXT NOT NULL,
    at       DATETIME NOT NULL
);
CREATE INDEX changes_agent ON changes (agent_id);

-- +goose Down
DROP TABLE changes;
DROP TABLE audit_log;
DROP TABLE tokens;
DROP TABLE fetch_attempts;
DROP TABLE card_versions;
DROP TABLE agents;
