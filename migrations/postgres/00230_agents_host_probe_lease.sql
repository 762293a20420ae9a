-- +goose Up
-- Before leasing agents for probes, the prober counts the live leases of
-- their hosts (probes yield to the crawler's per-host politeness). With
-- probe leases in no index that count read every agent of every host in
-- the claim — all 100,000 agents of a 50-host catalogue, about 30 ms a
-- claim, and the prober claims several times a second while it paces a
-- large first round (docs/benchmarks.md "Under real load"). Held probe
-- leases are few: this index finds them per host as agents_host_lease
-- finds crawl leases.
CREATE INDEX agents_host_probe_lease ON agents (host, probe_lease_until);

-- +goose Down
DROP INDEX agents_host_probe_lease;
