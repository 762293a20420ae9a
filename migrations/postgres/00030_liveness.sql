-- +goose Up
-- Protocol-level liveness (docs/liveness.md). The probe schedule and lease
-- live on the agent row, like the crawl's: one claim statement picks due,
-- approved agents through agents_probe_due. probe_next_at NULL means never
-- probed (due at once).
ALTER TABLE agents ADD COLUMN probe_next_at TIMESTAMPTZ;
ALTER TABLE agents ADD COLUMN probe_lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN probe_lease_until TIMESTAMPTZ;
ALTER TABLE agents ADD COLUMN probe_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN probe_disabled BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE agents ADD COLUMN liveness TEXT NOT NULL DEFAULT 'unknown';
ALTER TABLE agents ADD COLUMN liveness_since TIMESTAMPTZ;
CREATE INDEX agents_probe_due ON agents (probe_next_at, id);

-- One row per probe of one interface, kept for the probe history period.
CREATE TABLE probes (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    at               TIMESTAMPTZ NOT NULL,
    url              TEXT NOT NULL,
    binding          TEXT NOT NULL,
    protocol_version TEXT NOT NULL DEFAULT '',
    outcome          TEXT NOT NULL,
    error_class      TEXT NOT NULL DEFAULT '',
    latency_ms       BIGINT NOT NULL DEFAULT 0,
    http_status      INTEGER NOT NULL DEFAULT 0,
    rpc_code         INTEGER NOT NULL DEFAULT 0,
    message          TEXT NOT NULL DEFAULT ''
);
CREATE INDEX probes_agent ON probes (agent_id, id);
CREATE INDEX probes_at ON probes (at);

-- The latest state of each probed interface of an agent.
CREATE TABLE probe_interfaces (
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    url              TEXT NOT NULL,
    binding          TEXT NOT NULL,
    protocol_version TEXT NOT NULL DEFAULT '',
    outcome          TEXT NOT NULL,
    error_class      TEXT NOT NULL DEFAULT '',
    latency_ms       BIGINT NOT NULL DEFAULT 0,
    http_status      INTEGER NOT NULL DEFAULT 0,
    rpc_code         INTEGER NOT NULL DEFAULT 0,
    message          TEXT NOT NULL DEFAULT '',
    last_probe_at    TIMESTAMPTZ NOT NULL,
    failing_since    TIMESTAMPTZ,
    PRIMARY KEY (agent_id, url, binding)
);

-- Daily roll-ups per agent (UTC days, 'YYYY-MM-DD'), kept longer than the
-- probes themselves: uptime over 7 and 30 days and the uptime strip.
CREATE TABLE probe_days (
    agent_id       TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    day            TEXT NOT NULL,
    probes         BIGINT NOT NULL DEFAULT 0,
    up             BIGINT NOT NULL DEFAULT 0,
    nonconformant  BIGINT NOT NULL DEFAULT 0,
    down           BIGINT NOT NULL DEFAULT 0,
    latency_ms_sum BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, day)
);
CREATE INDEX probe_days_day ON probe_days (day);

-- +goose Down
DROP TABLE probe_days;
DROP TABLE probe_interfaces;
DROP TABLE probes;
DROP INDEX agents_probe_due;
ALTER TABLE agents DROP COLUMN liveness_since;
ALTER TABLE agents DROP COLUMN liveness;
ALTER TABLE agents DROP COLUMN probe_disabled;
ALTER TABLE agents DROP COLUMN probe_failures;
ALTER TABLE agents DROP COLUMN probe_lease_until;
ALTER TABLE agents DROP COLUMN probe_lease_owner;
ALTER TABLE agents DROP COLUMN probe_next_at;
