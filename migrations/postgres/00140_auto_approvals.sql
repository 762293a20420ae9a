-- +goose Up
-- Automatic approvals per registrable domain and UTC day (docs/claims.md
-- "Approval by policy"): the policy approves at most --auto-approve-per-domain
-- agents of one domain a day. Beyond that an agent stays pending and
-- auto_approve_held says why, for the curators' review queue.
CREATE TABLE auto_approvals (
    domain    TEXT NOT NULL,
    day       TEXT NOT NULL,
    approvals INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (domain, day)
);
ALTER TABLE agents ADD COLUMN auto_approve_held TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agents DROP COLUMN auto_approve_held;
DROP TABLE auto_approvals;
