-- +goose Up
-- A listing reads a version's verdict and problems beside its view, so a
-- search page reads card_views and never card_versions, whose rows carry
-- the raw card and spill into overflow pages. The verdict is updated in
-- both tables by the same transaction when keys change. Views stored
-- before this migration lack both: they are dropped, and the server
-- renders them again at start-up (docs/operator-guide.md "Upgrades").
DELETE FROM card_views;
ALTER TABLE card_views ADD COLUMN verdict TEXT NOT NULL DEFAULT '{}';
ALTER TABLE card_views ADD COLUMN problems TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE card_views DROP COLUMN problems;
ALTER TABLE card_views DROP COLUMN verdict;
