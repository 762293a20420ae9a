-- +goose Up
-- How far each change's agent was listed before and after the change
-- (registry/visibility.go reach: 0 admins only, 1 its host's publisher
-- tokens, 2 reader tokens, 3 everyone), so the change feed shows a caller
-- only agents it could list at some point (docs/api.md "Feeds").
--
-- Rows written before this migration are filled conservatively: the side
-- after each change gets the agent's state now, which every caller it
-- admits can list now; the side before gets 0. An old change of an agent
-- that is not listed now is therefore shown to admins only.
ALTER TABLE changes ADD COLUMN reach_before INTEGER NOT NULL DEFAULT 0;
ALTER TABLE changes ADD COLUMN reach_after INTEGER NOT NULL DEFAULT 0;
UPDATE changes c SET reach_after = CASE
        WHEN a.status = 'removed' THEN 0
        WHEN a.status <> 'approved' OR a.health = 'gone' THEN 1
        WHEN a.visibility <> 'public' THEN 2
        ELSE 3 END
    FROM agents a WHERE a.id = c.agent_id;

-- +goose Down
ALTER TABLE changes DROP COLUMN reach_after;
ALTER TABLE changes DROP COLUMN reach_before;
