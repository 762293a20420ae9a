-- +goose Up
-- A result list shows a bounded summary of each card (agentcard's
-- SummaryJSON, docs/api.md "Lists and search"), stored beside the view
-- when the version is stored, so a page of 100 results reads 100 small
-- rows and never the cards (docs/threats.md K.96). Views of the previous
-- revision have no summary: they are ignored and rendered again at
-- start-up (agentcard.ViewRevision 2).
ALTER TABLE card_views ADD COLUMN summary BLOB;

-- +goose Down
ALTER TABLE card_views DROP COLUMN summary;
