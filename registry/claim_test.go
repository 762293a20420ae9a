package registry_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// TestClaimDueExclusive: concurrent claimers never get the same agent, and
// together they get every due agent.
func TestClaimDueExclusive(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		const hosts, perHostAgents = 10, 3
		for h := range hosts {
			for i := range perHostAgents {
				mustSubmit(t, svc, fmt.Sprintf("https://h%d.example.com/a%d.json", h, i))
			}
		}
		var (
			mu    sync.Mutex
			owner = map[string]string{}
			dups  []string
			errs  []error
			wg    sync.WaitGroup
		)
		for w := range 8 {
			wg.Go(func() {
				name := fmt.Sprintf("w%d", w)
				for range 20 {
					got, err := svc.ClaimDue(t.Context(), name, c.Now(), time.Minute, 3, 100)
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					}
					for _, d := range got {
						if prev, ok := owner[d.ID]; ok {
							dups = append(dups, d.ID+" by "+prev+" and "+name)
						}
						owner[d.ID] = name
					}
					mu.Unlock()
					if len(got) == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 || len(dups) > 0 || len(owner) != hosts*perHostAgents {
			t.Fatalf("errors %v, double claims %v, claimed %d of %d", errs, dups, len(owner), hosts*perHostAgents)
		}
	})
}

// TestClaimDuePerHost: at most perHost live leases per host, counting
// leases held by other claimers; expired and released leases free slots.
func TestClaimDuePerHost(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		for i := range 5 {
			mustSubmit(t, svc, fmt.Sprintf("https://busy.example.com/a%d.json", i))
		}
		lone := mustSubmit(t, svc, "lone.example.com")
		got, err := svc.ClaimDue(ctx, "w1", c.Now(), time.Minute, 100, 2)
		if err != nil || len(got) != 3 {
			t.Fatalf("first claim: %d, %v", len(got), err)
		}
		perHost := map[string]int{}
		for _, d := range got {
			perHost[d.Host]++
			if d.ID == lone.ID && (!d.BareHost || d.CardURL != "https://lone.example.com"+wk || !d.LeaseUntil.Equal(c.Now().Add(time.Minute))) {
				t.Fatalf("due agent %+v", d)
			}
		}
		if perHost["busy.example.com"] != 2 || perHost["lone.example.com"] != 1 {
			t.Fatalf("per host %v", perHost)
		}
		if got, _ := svc.ClaimDue(ctx, "w2", c.Now(), time.Minute, 100, 2); len(got) != 0 {
			t.Fatalf("w2 claimed %d beside w1's live leases", len(got))
		}
		// Released leases are claimable at once.
		if err := svc.ReleaseLeases(ctx, "w1"); err != nil {
			t.Fatal(err)
		}
		if got, _ := svc.ClaimDue(ctx, "w2", c.Now(), time.Minute, 100, 2); len(got) != 3 {
			t.Fatalf("after release w2 claimed %d", len(got))
		}
		// Expired leases neither count nor block.
		c.Advance(2 * time.Minute)
		if got, _ := svc.ClaimDue(ctx, "w3", c.Now(), time.Minute, 100, 2); len(got) != 3 {
			t.Fatalf("after expiry w3 claimed %d", len(got))
		}
		// A stale owner cannot record over the new lease.
		if err := svc.RecordFetch(ctx, "w2", lone.ID, errResult(c.Now(), "dns", 0)); !isErr(err, registry.ErrLeaseLost) {
			t.Fatalf("stale owner: %v", err)
		}
		// Not due yet: nothing.
		if err := svc.ReleaseLeases(ctx, "w3"); err != nil {
			t.Fatal(err)
		}
		if got, _ := svc.ClaimDue(ctx, "w4", c.Now().Add(-time.Hour), time.Minute, 100, 2); len(got) != 0 {
			t.Fatalf("claimed %d agents that are not due", len(got))
		}
	})
}

func TestClaimDueCarriesPinnedKeysAndRequestCrawl(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://a.example.com/card.json")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "1"), registry.TrustUnsigned))
		jwks := []byte(`{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}`)
		got, err := svc.PinKeys(ctx, admin, a.ID, jwks)
		if err != nil {
			t.Fatal(err)
		}
		if got.NextFetchAt == nil || !got.NextFetchAt.Equal(c.Now()) {
			t.Fatalf("pinning does not make the agent due: %+v", got.NextFetchAt)
		}
		due, err := svc.ClaimDue(ctx, "w1", c.Now(), time.Minute, 10, 2)
		if err != nil || len(due) != 1 || string(due[0].PinnedKeys) != string(jwks) || due[0].BareHost || due[0].ETag != `"e1"` {
			t.Fatalf("due %+v, %v", due, err)
		}
		if err := svc.RecordFetch(ctx, "w1", a.ID, okResult(t, c.Now(), cardJSON("A", "1"), registry.TrustUnsigned)); err != nil {
			t.Fatal(err)
		}
		// RequestCrawl: admin, or the publisher of this host (I.79).
		if _, err := svc.RequestCrawl(ctx, publisher("other.example.com"), a.ID); !isErr(err, registry.ErrForbidden) {
			t.Fatalf("other publisher: %v", err)
		}
		if _, err := svc.RequestCrawl(ctx, reader, a.ID); !isErr(err, registry.ErrForbidden) {
			t.Fatalf("reader: %v", err)
		}
		if got, err := svc.RequestCrawl(ctx, publisher("a.example.com"), a.ID); err != nil || !got.NextFetchAt.Equal(c.Now()) {
			t.Fatalf("owner: %+v, %v", got, err)
		}
		if _, err := svc.UnpinKeys(ctx, admin, a.ID); err != nil {
			t.Fatal(err)
		}
		due, _ = svc.ClaimDue(ctx, "w1", c.Now(), time.Minute, 10, 2)
		if len(due) != 1 || due[0].PinnedKeys != nil {
			t.Fatalf("after unpin: %+v", due)
		}
		// Bad key sets are refused with a pointer.
		for _, bad := range []string{`{"keys":[]}`, `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`, `[]`,
			`{"keys":[{"kty":"EC","crv":"P-256","x":"a","y":"b","d":"private"}]}`, `{"keys":[{"kty":"EC","kid":"a"},{"kty":"EC","kid":"a"}]}`,
			`{"keys":[{"kty":"RSA","n":"x","e":"AQAB","use":"enc"}]}`, `{"keys":[{"kty":"EC"}],"keys":[]}`} {
			var ve *registry.ValidationError
			if _, err := svc.PinKeys(ctx, admin, a.ID, []byte(bad)); !asValidation(err, &ve) {
				t.Errorf("PinKeys(%s): %v", bad, err)
			}
		}
		if _, err := svc.PinKeys(ctx, publisher("a.example.com"), a.ID, jwks); !isErr(err, registry.ErrForbidden) {
			t.Fatalf("publisher pinning: %v", err)
		}
	})
}

// TestClaimDueSkipsLockedRows (PostgreSQL): a row another transaction
// holds (an admin action or a crawl result in flight) is skipped, not
// waited for.
func TestClaimDueSkipsLockedRows(t *testing.T) {
	s := registrytest.Postgres(t)
	c := newClock()
	svc := newService(s, c)
	held := mustSubmit(t, svc, "https://held.example.com/")
	free := mustSubmit(t, svc, "https://free.example.com/")
	tx := s.WriteDB().Begin()
	defer tx.Rollback()
	if err := tx.Exec("SELECT id FROM agents WHERE id = ? FOR UPDATE", held.ID).Error; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	got, err := svc.ClaimDue(ctx, "w1", c.Now(), time.Minute, 10, 2)
	if err != nil || len(got) != 1 || got[0].ID != free.ID {
		t.Fatalf("claimed %+v, %v; want only %s", got, err, free.ID)
	}
}
