-- +goose Up
-- An interface listed for two protocol versions at one URL (1.0 and 0.3 on
-- one JSON-RPC endpoint) is probed under each version (docs/liveness.md):
-- its latest state is kept per (URL, binding, protocol version). SQLite
-- changes a primary key by rebuilding the table.
CREATE TABLE probe_interfaces_new (
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    url              TEXT NOT NULL,
    binding          TEXT NOT NULL,
    protocol_version TEXT NOT NULL DEFAULT '',
    outcome          TEXT NOT NULL,
    error_class      TEXT NOT NULL DEFAULT '',
    latency_ms       INTEGER NOT NULL DEFAULT 0,
    http_status      INTEGER NOT NULL DEFAULT 0,
    rpc_code         INTEGER NOT NULL DEFAULT 0,
    message          TEXT NOT NULL DEFAULT '',
    last_probe_at    DATETIME NOT NULL,
    failing_since    DATETIME,
    PRIMARY KEY (agent_id, url, binding, protocol_version)
);
INSERT INTO probe_interfaces_new SELECT agent_id, url, binding, protocol_version, outcome, error_class, latency_ms,
    http_status, rpc_code, message, last_probe_at, failing_since FROM probe_interfaces;
DROP TABLE probe_interfaces;
ALTER TABLE probe_interfaces_new RENAME TO probe_interfaces;

-- +goose Down
CREATE TABLE probe_interfaces_old (
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    url              TEXT NOT NULL,
    binding          TEXT NOT NULL,
    protocol_version TEXT NOT NULL DEFAULT '',
    outcome          TEXT NOT NULL,
    error_class      TEXT NOT NULL DEFAULT '',
    latency_ms       INTEGER NOT NULL DEFAULT 0,
    http_status      INTEGER NOT NULL DEFAULT 0,
    rpc_code         INTEGER NOT NULL DEFAULT 0,
    message          TEXT NOT NULL DEFAULT '',
    last_probe_at    DATETIME NOT NULL,
    failing_since    DATETIME,
    PRIMARY KEY (agent_id, url, binding)
);
INSERT OR IGNORE INTO probe_interfaces_old SELECT agent_id, url, binding, protocol_version, outcome, error_class, latency_ms,
    http_status, rpc_code, message, last_probe_at, failing_since FROM probe_interfaces ORDER BY protocol_version DESC;
DROP TABLE probe_interfaces;
ALTER TABLE probe_interfaces_old RENAME TO probe_interfaces;
