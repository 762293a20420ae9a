-- +goose Up
-- How far each change's agent was listed before and after the change
-- (registry/visibility.go reach: 0 admins only, 1 its host's publisher
-- tokens, 2 reader tokens, 3 everyone), so the change feed shows a caller
-- only agents it could list at some point (docs/api.md "Feeds").
--
-- Rows written before this migration get -1 (unknown) on both sides and
-- are judged by the agent's state now: a caller sees an old change only
-- of an agent it can list now, and none of an agent it cannot. Adding a
-- column with a constant default rewrites no row, so the upgrade takes no
-- time however long the log is.
ALTER TABLE changes ADD COLUMN reach_before INTEGER NOT NULL DEFAULT -1;
ALTER TABLE changes ADD COLUMN reach_after INTEGER NOT NULL DEFAULT -1;

-- +goose Down
ALTER TABLE changes DROP COLUMN reach_after;
ALTER TABLE changes DROP COLUMN reach_before;
