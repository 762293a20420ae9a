-- +goose Up
-- Agents for groups (docs/security.md "Who sees what"): an agent of
-- visibility "groups" is listed and read only by the callers holding one of
-- its groups, its host's publisher tokens and admins.
--
-- agents.visible_groups: the agent's groups while its visibility is
-- "groups", "" otherwise, each name between newlines ("\npayments\nrisk\n"),
-- read with the row by the rule's Go spelling (registry/visibility.go).
-- agent_groups holds the same, one row per group, for the rule's SQL
-- spelling: "is for one of the caller's groups" is an indexed lookup
-- whatever the number of groups a caller holds. Both are written together
-- by the one operation that sets them (registry SetVisibility).
--
-- changes.groups_before / groups_after: visible_groups of each side of a change,
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
CREATE TABLE agent_groups (
    name     TEXT NOT NULL,
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    PRIMARY KEY (name, agent_id)
);
CREATE INDEX agent_groups_agent ON agent_groups (agent_id);

-- +goose Down
DROP TABLE agent_groups;
ALTER TABLE tokens DROP COLUMN member_of;
ALTER TABLE changes DROP COLUMN groups_after;
ALTER TABLE changes DROP COLUMN groups_before;
ALTER TABLE agents DROP COLUMN visible_groups;
