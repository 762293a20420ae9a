-- +goose Up
-- The view of a version's card as listings show it (agentcard's ViewJSON:
-- the A2A card JSON), its shape and protocol versions, rendered when the
-- version is stored, so a search page serves twenty cards without decoding
-- any. rev is the rendering's revision (agentcard.ViewRevision): a view of
-- another revision is ignored and rendered again. Kept apart from
-- card_versions, whose rows carry the raw bytes, so reading a view reads
-- one small row (docs/benchmarks.md "Search").
CREATE TABLE card_views (
    agent_id          TEXT NOT NULL,
    seq               BIGINT NOT NULL,
    rev               INTEGER NOT NULL,
    rendered          BYTEA NOT NULL,
    shape             TEXT NOT NULL DEFAULT '',
    protocol_versions TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (agent_id, seq),
    FOREIGN KEY (agent_id, seq) REFERENCES card_versions (agent_id, seq) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE card_views;
