-- +goose Up
-- The agent's v0.3 rendering of a version, when it serves one to requests
-- without A2A-Version: 1.0 (Vary: A2A-Version), so /card can answer v0.3
-- clients with what the agent itself would (docs/verification.md).
ALTER TABLE card_versions ADD COLUMN legacy_raw BYTEA;

-- +goose Down
ALTER TABLE card_versions DROP COLUMN legacy_raw;
