-- +goose Up
-- Catalogs get the lifecycle agents have (docs/discovery.md "A catalog's
-- lifecycle"): an opaque id for the API, the web and the command line; a
-- status a curator sets (active, paused, removed); and a health kept by
-- the agents' failure rule (unknown, ok, failing, gone) from the failures
-- of its crawls.
ALTER TABLE catalogs ADD COLUMN id TEXT NOT NULL DEFAULT '';
ALTER TABLE catalogs ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
ALTER TABLE catalogs ADD COLUMN health TEXT NOT NULL DEFAULT 'unknown';
ALTER TABLE catalogs ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE catalogs ADD COLUMN consecutive_missing INTEGER NOT NULL DEFAULT 0;
ALTER TABLE catalogs ADD COLUMN failing_since DATETIME;
UPDATE catalogs SET id = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX catalogs_id ON catalogs (id);

-- +goose Down
DROP INDEX catalogs_id;
ALTER TABLE catalogs DROP COLUMN failing_since;
ALTER TABLE catalogs DROP COLUMN consecutive_missing;
ALTER TABLE catalogs DROP COLUMN consecutive_failures;
ALTER TABLE catalogs DROP COLUMN health;
ALTER TABLE catalogs DROP COLUMN status;
ALTER TABLE catalogs DROP COLUMN id;
