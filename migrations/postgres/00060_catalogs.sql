-- +goose Up
-- AI Catalogs Cardex crawls (docs/discovery.md "Listing several agents with
-- one catalog"): one row per catalog URL, with its validator for
-- conditional requests, its schedule and the trace of its last crawl (which
-- entry became which agent, and why others did not). An agent registered
-- from a catalog remembers it in catalog_url.
CREATE TABLE catalogs (
    url             TEXT PRIMARY KEY,
    domain          TEXT NOT NULL,
    etag            TEXT NOT NULL DEFAULT '',
    next_crawl_at   TIMESTAMPTZ NOT NULL,
    last_crawled_at TIMESTAMPTZ,
    last_error      TEXT NOT NULL DEFAULT '',
    trace           TEXT NOT NULL DEFAULT '{}',
    created_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX catalogs_due ON catalogs (next_crawl_at);
ALTER TABLE agents ADD COLUMN catalog_url TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agents DROP COLUMN catalog_url;
DROP TABLE catalogs;
