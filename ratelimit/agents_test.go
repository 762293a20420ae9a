package ratelimit

import (
	"testing"
	"time"
)

// A catalog's agents spend one unit each of the submitter's and the
// registrable domain's buckets (docs/threats.md K.97): Admit's unit pays
// for the first; a partial grant says which bucket ran out and when the
// next unit comes; two submitters share the domain's bucket; a crawl no one
// asked for spends the domain's only.
func TestAgentBudget(t *testing.T) {
	l := NewLimiters(Limits{SubmitPerAddress: Rate{N: 6, Per: time.Hour}, SubmitPerDomain: Rate{N: 10, Per: time.Hour}}, 0)
	a := l.Agents("10.0.0.1", "https://cat.example.com/.well-known/ai-catalog.json")
	if r := a.Admit(t0); r != nil {
		t.Fatalf("admit: %+v", r)
	}
	if got, r := a.Spend(1, t0); got != 1 || r != nil {
		t.Fatalf("the first agent is paid by Admit: %d %+v", got, r)
	}
	// 5 units left for this address: 5 of 8 granted.
	got, r := a.Spend(8, t0)
	if got != 5 || r == nil || r.Detail != "too many submissions from this address" || r.Wait != 10*time.Minute {
		t.Fatalf("spend 8: %d %+v", got, r)
	}
	if r := a.Admit(t0); r == nil || r.Detail != "too many submissions from this address" {
		t.Fatalf("admit on an empty bucket: %+v", r)
	}
	// Another address on the same domain (another subdomain): the domain
	// has 4 units left.
	b := l.Agents("10.0.0.2", "https://x.example.com/c.json")
	if got, r := b.Spend(6, t0); got != 4 || r == nil || r.Detail != "too many submissions for this domain" {
		t.Fatalf("second submitter: %d %+v", got, r)
	}
	// A scheduled crawl: the domain's bucket only, empty now.
	if got, r := l.Agents("", "https://cat.example.com/").Spend(3, t0); got != 0 || r == nil || r.Detail != "too many submissions for this domain" {
		t.Fatalf("scheduled crawl: %d %+v", got, r)
	}
	// Another domain: its own bucket; an hour later, full ones.
	if got, r := l.Agents("", "https://other.example.org/").Spend(3, t0); got != 3 || r != nil {
		t.Fatalf("other domain: %d %+v", got, r)
	}
	if got, r := l.Agents("10.0.0.1", "https://cat.example.com/").Spend(6, t0.Add(time.Hour)); got != 6 || r != nil {
		t.Fatalf("an hour later: %d %+v", got, r)
	}
	// Disabled limits and a nil budget allow everything.
	var none *Limiters
	if got, r := none.Agents("x", "y").Spend(1000, t0); got != 1000 || r != nil {
		t.Fatalf("nil limiters: %d %+v", got, r)
	}
}
