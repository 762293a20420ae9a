-- +goose Up
-- The audit log is read newest first and filtered by agent, actor and
-- action (GET /api/v1/audit?agentId=&actor=&action=, the admin audit page).
CREATE INDEX audit_log_agent ON audit_log (agent_id, seq);
CREATE INDEX audit_log_actor ON audit_log (actor_name, seq);
CREATE INDEX audit_log_action ON audit_log (action, seq);

-- +goose Down
DROP INDEX audit_log_action;
DROP INDEX audit_log_actor;
DROP INDEX audit_log_agent;
