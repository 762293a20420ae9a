package registry_test

import (
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

func TestCountDueIsTheCrawlBacklog(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := newService(s, c)
		a := mustSubmit(t, svc, "https://a.example.com/")
		mustSubmit(t, svc, "https://b.example.com/")
		rejected := mustSubmit(t, svc, "https://c.example.com/")
		if _, err := svc.Act(ctx, admin, rejected.ID, registry.ActionReject, registry.ActionRequest{}); err != nil {
			t.Fatal(err)
		}
		count := func() int64 {
			t.Helper()
			n, err := svc.CountDue(ctx, c.Now())
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := count(); n != 2 {
			t.Fatalf("due = %d, want 2 (new agents are due now; rejected ones are not crawled)", n)
		}
		// A fetched agent is due again only at its next fetch time; a
		// leased one is not due until its lease expires.
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "1"), registry.TrustUnsigned))
		if n := count(); n != 1 {
			t.Fatalf("due after one fetch = %d, want 1", n)
		}
		if _, err := svc.ClaimDue(ctx, "w1", c.Now(), time.Minute, 10, 2); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 0 {
			t.Fatalf("due while leased = %d, want 0", n)
		}
		c.Advance(2 * time.Hour)
		if n := count(); n != 2 {
			t.Fatalf("due two hours later = %d, want 2", n)
		}
		st := s.DBStats()
		if st.Write.MaxOpenConnections < 1 || st.Read.OpenConnections < 1 {
			t.Fatalf("pool stats look empty: %+v", st)
		}
		if s.Dialect() == registry.DialectSQLite && st.Write.MaxOpenConnections != 1 {
			t.Fatalf("SQLite must have one writer connection, stats say %d", st.Write.MaxOpenConnections)
		}
	})
}
