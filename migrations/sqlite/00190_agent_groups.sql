-- +goose Up
-- Agents for groups (docs/security.md "Who sees what"): an agent of
-- visibility "groups" is listed and read only by the callers holding one of
-- its groups, its host's publisher tokens and admins.
--
-- agents.visible_groups: the agent's groups while its visibility is
-- "groups", "" otherwise, each name between newlines ("\npayments\nrisk\n"),
-- so "holds group g" is the exact, case-sensitive test
-- replace(visible_groups, '\ng\n', '') <> visible_groups in both dialects
-- (registry/visibility.go groupSQL). Names never hold a newline.
--
-- changes.groups_before / groups_after: the same of each side of a change,
-- set only when that side listed the agent to its groups (approved, not
-- gone, visibility "groups"; its reach is then 1), so the change feed shows
-- a change to a group's members only when they could list the agent before
-- or after it. Rows written before this migration hold "": no group saw them.
--
-- tokens.member_of: the JSON list of groups a token holds
-- (cardex token create --groups), [] for none.
--
-- Columns with a constant default rewrite no row.
ALTER TABLE agents ADD COLUMN visible_groups TEXT NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN groups_before TEXT NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN groups_after TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN member_of TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE tokens DROP COLUMN member_of;
ALTER TABLE changes DROP COLUMN groups_after;
ALTER TABLE changes DROP COLUMN groups_before;
ALTER TABLE agents DROP COLUMN visible_groups;
