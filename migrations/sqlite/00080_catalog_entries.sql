-- +goose Up
-- Agents an AI Catalog brought (docs/discovery.md "Listing several agents
-- with one catalog"): catalog_card holds the card of an inline entry (its
-- data member), taken from the catalog document on each crawl of the
-- catalog, NULL for an agent with a card URL; catalog_missing is set when
-- the last complete crawl of its catalog no longer listed it, so the
-- crawler records it as missing the way it records a card that answers 404.
ALTER TABLE agents ADD COLUMN catalog_card BLOB;
ALTER TABLE agents ADD COLUMN catalog_missing BOOLEAN NOT NULL DEFAULT 0;
CREATE INDEX agents_catalog ON agents (catalog_url) WHERE catalog_url <> '';

-- +goose Down
DROP INDEX agents_catalog;
ALTER TABLE agents DROP COLUMN catalog_missing;
ALTER TABLE agents DROP COLUMN catalog_card;
