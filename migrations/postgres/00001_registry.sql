-- +goose Up
CREATE TABLE agents (
    id                    TEXT PRIMARY KEY,
    card_url              TEXT NOT NULL UNIQUE, -- normalized (docs/api.md "Agent identity"); backs docs/threats.md A.6
    fetched_url           TEXT NOT NULL DEFAULT '',
    host                  TEXT NOT NULL,
    bare_host             BOOLEAN NOT NULL DEFAULT FALSE,
    status                TEXT NOT NULL,
    visibility            TEXT NOT NULL,
    health                TEXT NOT NULL,
    trust                 TEXT NOT NULL,
    needs_review          BOOLEAN NOT NULL DEFAULT FALSE,
    name                  TEXT NOT NULL DEFAULT '',
    last_fetched_at       TIMESTAMPTZ,
    last_changed_at       TIMESTAMPTZ,
    last_success_at       TIMESTAMPTZ,
    failing_since         TIMESTAMPTZ,
    consecutive_failures  INTEGER NOT NULL DEFAULT 0,
    consecutive_missing   INTEGER NOT NULL DEFAULT 0,
    etag                  TEXT NOT NULL DEFAULT '',
    last_modified         TEXT NOT NULL DEFAULT '',
    next_fetch_at         TIMESTAMPTZ NOT NULL,
    lease_owner           TEXT NOT NULL DEFAULT '',
    lease_until           TIMESTAMPTZ,
    pinned_keys           TEXT,
    verified_thumbprints  TEXT NOT NULL DEFAULT '[]',
    current_version_seq   BIGINT NOT NULL DEFAULT 0,
    candidate_version_seq BIGINT NOT NULL DEFAULT 0,
    latest_version_seq    BIGINT NOT NULL DEFAULT 0,
    last_error_class      TEXT NOT NULL DEFAULT '',
    last_error_status     INTEGER NOT NULL DEFAULT 0,
    last_error_message    TEXT NOT NULL DEFAULT '',
    last_error_at         TIMESTAMPTZ,
    created_at            TIMESTAMPTZ NOT NULL,
    updated_at            TIMESTAMPTZ NOT NULL
);
CREATE INDEX agents_due ON agents (next_fetch_at, id);
CREATE INDEX agents_host_lease ON agents (host, lease_until);
CREATE INDEX agents_updated ON agents (updated_at, id);
CREATE INDEX agents_name ON agents (name, id);
CREATE INDEX agents_status ON agents (status, visibility, health);

CREATE TABLE card_versions (
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    seq              BIGINT NOT NULL,
    raw              BYTEA NOT NULL,
    sha256           TEXT NOT NULL,
    fetched_at       TIMESTAMPTZ NOT NULL,
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
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent_id    TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    at          TIMESTAMPTZ NOT NULL,
    url         TEXT NOT NULL,
    http_status INTEGER NOT NULL DEFAULT 0,
    duration_ms BIGINT NOT NULL DEFAULT 0,
    bytes       BIGINT NOT NULL DEFAULT 0,
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
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    expires_at   TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
);

CREATE TABLE audit_log (
    seq            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at             TIMESTAMPTZ NOT NULL,
    actor_token_id TEXT NOT NULL DEFAULT '',
    actor_name     TEXT NOT NULL DEFAULT '',
    action         TEXT NOT NULL,
    agent_id       TEXT NOT NULL DEFAULT '',
    reason         TEXT NOT NULL DEFAULT '',
    detail         TEXT NOT NULL DEFAULT '{}'
);

-- The store inserts change rows under a transaction-level advisory lock, so
-- sequence numbers become visible in commit order and a follower reading
-- "after N" never misses a row committed late with a smaller seq.
CREATE TABLE changes (
    seq      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent_id TEXT NOT NULL,
    kind     TEXT NOT NULL,
    at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX changes_agent ON changes (agent_id);

-- +goose Down
DROP TABLE changes;
DROP TABLE audit_log;
DROP TABLE tokens;
DROP TABLE fetch_attempts;
DROP TABLE card_versions;
DROP TABLE agents;
