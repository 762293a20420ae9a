-- +goose Up
-- Until this release a signature that verified was judged invalid when
-- members outside what it covers disagreed with the signed ones; it is now
-- verified and those members are ignored (docs/verification.md). Such
-- versions (an invalid verdict naming unsigned members) that an agent
-- still uses — current, candidate or newest — are marked here and judged
-- again from their stored bytes by cardex serve at start-up, without a
-- crawl (registry.Service.StoredToReverify).
ALTER TABLE card_versions ADD COLUMN reverify BOOLEAN NOT NULL DEFAULT 0;
UPDATE card_versions SET reverify = 1
 WHERE trust = 'invalid' AND verdict LIKE '%"unsigned":[%'
   AND EXISTS (SELECT 1 FROM agents a WHERE a.id = card_versions.agent_id
     AND card_versions.seq IN (a.current_version_seq, a.candidate_version_seq, a.latest_version_seq));
CREATE INDEX card_versions_reverify ON card_versions (agent_id, seq) WHERE reverify;

-- +goose Down
DROP INDEX card_versions_reverify;
ALTER TABLE card_versions DROP COLUMN reverify;
