-- +goose Up
-- A listing reads a view's small columns (shape, protocol versions,
-- verdict, summary) and never its rendering, but SQLite stores a row's
-- columns in order and a value past a large one is reached only by
-- walking that one's overflow pages: with `rendered` (up to the card size
-- limit) before them, a page of 100 summaries read ~50 MB of pages
-- (docs/benchmarks.md "Cost of anonymous requests"). The rendering goes
-- last, so the small columns sit in the row's first page. SQLite changes
-- column order by rebuilding the table.
CREATE TABLE card_views_new (
    agent_id          TEXT NOT NULL,
    seq               INTEGER NOT NULL,
    rev               INTEGER NOT NULL,
    shape             TEXT NOT NULL DEFAULT '',
    protocol_versions TEXT NOT NULL DEFAULT '',
    verdict           TEXT NOT NULL DEFAULT '{}',
    problems          TEXT NOT NULL DEFAULT '[]',
    summary           BLOB,
    rendered          BLOB NOT NULL,
    PRIMARY KEY (agent_id, seq),
    FOREIGN KEY (agent_id, seq) REFERENCES card_versions (agent_id, seq) ON DELETE CASCADE
);
INSERT INTO card_views_new (agent_id, seq, rev, shape, protocol_versions, verdict, problems, summary, rendered)
    SELECT agent_id, seq, rev, shape, protocol_versions, verdict, problems, summary, rendered FROM card_views;
DROP TABLE card_views;
ALTER TABLE card_views_new RENAME TO card_views;

-- +goose Down
CREATE TABLE card_views_old (
    agent_id          TEXT NOT NULL,
    seq               INTEGER NOT NULL,
    rev               INTEGER NOT NULL,
    rendered          BLOB NOT NULL,
    shape             TEXT NOT NULL DEFAULT '',
    protocol_versions TEXT NOT NULL DEFAULT '',
    verdict           TEXT NOT NULL DEFAULT '{}',
    problems          TEXT NOT NULL DEFAULT '[]',
    summary           BLOB,
    PRIMARY KEY (agent_id, seq),
    FOREIGN KEY (agent_id, seq) REFERENCES card_versions (agent_id, seq) ON DELETE CASCADE
);
INSERT INTO card_views_old (agent_id, seq, rev, rendered, shape, protocol_versions, verdict, problems, summary)
    SELECT agent_id, seq, rev, rendered, shape, protocol_versions, verdict, problems, summary FROM card_views;
DROP TABLE card_views;
ALTER TABLE card_views_old RENAME TO card_views;
