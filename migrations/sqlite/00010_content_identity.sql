-- +goose Up
-- A version is its content without `signatures` (RFC 8785) plus the keys
-- that verify it: an agent that signs its card afresh on every request
-- serves new bytes for the same version (docs/verification.md). Empty for
-- versions recorded before this column existed: those compare by bytes.
ALTER TABLE card_versions ADD COLUMN content_sha256 TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE card_versions DROP COLUMN content_sha256;
