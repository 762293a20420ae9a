package crawler_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// docs/design.md "How data flows", end to end against the loopback fleet: submit
// → crawl → version stored → approve → re-crawl answers 304 → unchanged; a
// changing card makes a new version with its diff.
func TestCrawlSubmitApproveRecrawl(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2, Signer: verifierSigner})
		cond := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Conditional})
		chg := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Changing})
		signed := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed})
		st := newStack(t, store, stackOptions{})
		condID, chgID, signedID := st.submit(t, cond.URL()), st.submit(t, chg.URL()), st.submit(t, signed.URL())

		st.crawl(t, 3)
		a := st.get(t, condID)
		if a.VersionSeq != 1 || a.Health != registry.HealthOK || a.Trust != registry.TrustUnsigned || a.Card == nil || a.LastError != nil {
			t.Fatalf("after the first crawl: version %d health %s trust %s card %v error %+v", a.VersionSeq, a.Health, a.Trust, a.Card != nil, a.LastError)
		}
		if a.FetchedURL != cond.URL() {
			t.Errorf("fetchedUrl %q, want %q", a.FetchedURL, cond.URL())
		}
		// Cache-Control: max-age=3600 with the test's jitter draw of 0.5.
		if want := st.clk.Now().Add(time.Hour); a.NextFetchAt == nil || !a.NextFetchAt.Equal(want) {
			t.Errorf("nextFetchAt %v, want %v", a.NextFetchAt, want)
		}
		s := st.get(t, signedID)
		if s.Trust != registry.TrustVerified || len(s.Signatures) != 1 || s.Signatures[0].Status != "verified" ||
			s.Signatures[0].KeySource != "jku" || s.Signatures[0].Kid != signed.KeyID() {
			t.Errorf("signed agent: trust %s signatures %+v", s.Trust, s.Signatures)
		}
		if v := st.versions(t, signedID); len(v) != 1 || len(v[0].Thumbprints) != 1 || v[0].Profile == "" {
			t.Errorf("signed agent version: %+v", v)
		}
		one := int64(1)
		if _, err := st.svc.Act(t.Context(), admin, condID, registry.ActionApprove, registry.ActionRequest{VersionSeq: &one}); err != nil {
			t.Fatal(err)
		}
		// Nothing is due before the schedule says so.
		st.clk.Advance(30 * time.Minute)
		st.quiet(t)
		st.later(t, 2*time.Hour, 3)

		f := st.lastFetch(t, condID)
		if f.HTTPStatus != 304 || f.Result != registry.ResultUnchanged || f.ErrorClass != "" {
			t.Errorf("re-crawl of the conditional agent: %+v", f)
		}
		if cond.Requests() != 2 {
			t.Errorf("conditional agent asked %d times, want 2", cond.Requests())
		}
		a = st.get(t, condID)
		if a.Status != registry.StatusApproved || a.VersionSeq != 1 || len(st.versions(t, condID)) != 1 {
			t.Errorf("after 304: status %s version %d", a.Status, a.VersionSeq)
		}
		v := st.versions(t, chgID)
		if len(v) != 2 || v[0].Seq != 2 || !v[0].Current {
			t.Fatalf("changing agent versions: %+v", v)
		}
		if !slices.ContainsFunc(v[0].Diff, func(c agentcard.Change) bool { return c.Kind == agentcard.ChangeVersion }) {
			t.Errorf("diff of the changed card %+v has no version change", v[0].Diff)
		}
		if f := st.lastFetch(t, chgID); f.Result != registry.ResultNewVersion || f.HTTPStatus != 200 {
			t.Errorf("changing agent fetch: %+v", f)
		}
	})
}

// A bare-host submission falls back to /.well-known/agent.json when the
// well-known card answers 404; the URL that answered is recorded and asked
// first next time (docs/api.md "Agent identity").
func TestCrawlLegacyFallback(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		fleet := agentfleet.Start(t, agentfleet.Options{})
		host := fleet.Hosts()[0]
		legacy := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: host, Path: "/.well-known/agent.json"})
		st := newStack(t, store, stackOptions{})
		id := st.submit(t, host.Origin())
		st.crawl(t, 1)
		a := st.get(t, id)
		if a.CardURL != host.Origin()+"/.well-known/agent-card.json" || a.FetchedURL != legacy.URL() || a.VersionSeq != 1 {
			t.Fatalf("cardUrl %s fetchedUrl %s version %d", a.CardURL, a.FetchedURL, a.VersionSeq)
		}
		if host.Requests() != 2 {
			t.Errorf("host asked %d times, want 2 (agent-card.json, then agent.json)", host.Requests())
		}
		st.later(t, 2*time.Hour, 1)
		if host.Requests() != 3 || legacy.Requests() != 2 {
			t.Errorf("re-crawl: host asked %d times, legacy %d; want the legacy URL only", host.Requests(), legacy.Requests())
		}
	})
}
