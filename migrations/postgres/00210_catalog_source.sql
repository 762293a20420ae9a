-- +goose Up
-- Where an agent brought by a catalog or an ARD document came from
-- (docs/discovery.md "Provenance"): catalog_source is a JSON object with
-- the document that listed it (the root or a nested one), the entry's
-- identifier exactly as the publisher wrote it, and the entry's publisher
-- when it named one; catalog_identifier is that identifier folded to the
-- current urn:air: prefix, the key an ARD lookup by identifier reads.
-- Both are NULL for an agent submitted directly.
ALTER TABLE agents ADD COLUMN catalog_source TEXT;
ALTER TABLE agents ADD COLUMN catalog_identifier TEXT;
CREATE INDEX agents_catalog_identifier ON agents (catalog_identifier);

-- +goose Down
DROP INDEX agents_catalog_identifier;
ALTER TABLE agents DROP COLUMN catalog_identifier;
ALTER TABLE agents DROP COLUMN catalog_source;
