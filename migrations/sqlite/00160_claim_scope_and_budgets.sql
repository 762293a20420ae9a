-- +goose Up
-- docs/claims.md "The rules": a publisher token a claim issued is scoped to
-- the claim's origin (scheme://host[:port]), so a claim proved on one port
-- does not act on another port's agents. '' (tokens an admin made) keeps
-- the host scope. Tokens issued before this migration get the origin of
-- the claim that issued them.
ALTER TABLE tokens ADD COLUMN origin TEXT NOT NULL DEFAULT '';
UPDATE tokens SET origin = (
    SELECT c.scheme || '://' || c.host FROM host_claims c WHERE c.token_id = tokens.id)
WHERE claim_id <> '' AND EXISTS (SELECT 1 FROM host_claims c WHERE c.token_id = tokens.id);

-- Who asked for a claim (the rate-limit key of the client address, or
-- token:{id}), so unverified claims are capped per host and requester
-- rather than per domain; and when it was last fetched, so verification
-- attempts of one claim are spaced.
ALTER TABLE host_claims ADD COLUMN requester TEXT NOT NULL DEFAULT '';
ALTER TABLE host_claims ADD COLUMN last_attempt_at DATETIME;
CREATE INDEX host_claims_requester ON host_claims (scope_host, requester, expires_at);

-- +goose Down
DROP INDEX host_claims_requester;
ALTER TABLE host_claims DROP COLUMN last_attempt_at;
ALTER TABLE host_claims DROP COLUMN requester;
ALTER TABLE tokens DROP COLUMN origin;
