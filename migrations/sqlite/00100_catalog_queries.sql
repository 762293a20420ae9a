-- +goose Up
-- The representativeQueries of the catalog entry that brought an agent
-- (docs/discovery.md "Listing several agents with one catalog"), as a JSON
-- array of strings within aicatalog's bounds; NULL when the entry has none
-- or the agent was not brought by a catalog. Search indexes them as text.
ALTER TABLE agents ADD COLUMN catalog_queries TEXT;

-- +goose Down
ALTER TABLE agents DROP COLUMN catalog_queries;
