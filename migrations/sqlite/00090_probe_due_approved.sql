-- +goose Up
-- The probe claim reads approved agents in probe_next_at order (never
-- probed first: probe_next_at NULL). With status leading the index, both
-- reads seek straight to the approved agents that are due and stop at their
-- LIMIT; on (probe_next_at, id) alone the planner could prefer agents_status
-- and sort every approved agent on each tick of the prober, whatever was due.
CREATE INDEX agents_probe_next ON agents (status, probe_next_at, id);
DROP INDEX agents_probe_due;

-- +goose Down
CREATE INDEX agents_probe_due ON agents (probe_next_at, id);
DROP INDEX agents_probe_next;
