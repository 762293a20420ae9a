// Package crawler keeps the registry's cards fresh: the fetch → parse →
// verify pipeline of one agent, the scheduler that leases due agents and
// records what each crawl learnt (docs/design.md "Crawl policy"), and the
// AI Catalog crawl. Every request goes through the hardened client of
// package fetch (docs/security.md "Network policy").
package crawler
