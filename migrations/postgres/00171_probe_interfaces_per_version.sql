-- +goose Up
-- An interface listed for two protocol versions at one URL (1.0 and 0.3 on
-- one JSON-RPC endpoint) is probed under each version (docs/liveness.md):
-- its latest state is kept per (URL, binding, protocol version).
ALTER TABLE probe_interfaces DROP CONSTRAINT probe_interfaces_pkey;
ALTER TABLE probe_interfaces ADD PRIMARY KEY (agent_id, url, binding, protocol_version);

-- +goose Down
DELETE FROM probe_interfaces p USING probe_interfaces q
 WHERE p.agent_id = q.agent_id AND p.url = q.url AND p.binding = q.binding AND p.protocol_version < q.protocol_version;
ALTER TABLE probe_interfaces DROP CONSTRAINT probe_interfaces_pkey;
ALTER TABLE probe_interfaces ADD PRIMARY KEY (agent_id, url, binding);
