package registry_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// Listed hydrates search hits: it keeps the caller's order, drops what the
// caller may not list and never returns a removed agent (the index holds
// none, so such a hit is stale; G.72).
func TestListedAppliesListingScope(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := newService(s, c)
		approved := func(url string) string {
			a := mustSubmit(t, svc, url)
			crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON(url, "1"), registry.TrustUnsigned))
			if _, err := svc.Act(ctx, admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)}); err != nil {
				t.Fatal(err)
			}
			return a.ID
		}
		pub1, pub2 := approved("https://one.example.com/"), approved("https://two.example.com/")
		internal := approved("https://three.example.com/")
		if _, err := svc.SetVisibility(ctx, admin, internal, registry.VisibilityInternal); err != nil {
			t.Fatal(err)
		}
		removed := approved("https://four.example.com/")
		if _, err := svc.Act(ctx, admin, removed, registry.ActionRemove, registry.ActionRequest{}); err != nil {
			t.Fatal(err)
		}
		pending := mustSubmit(t, svc, "https://five.example.com/").ID

		ids := []string{removed, pub2, pending, internal, pub1, "nope", pub2}
		for _, tc := range []struct {
			name string
			p    registry.Principal
			want []string
		}{
			{"anonymous", anonymous, []string{pub2, pub1}},
			{"reader", reader, []string{pub2, internal, pub1}},
			{"admin", admin, []string{pub2, pending, internal, pub1}},
			{"publisher of five", publisher("five.example.com", "four.example.com"), []string{pub2, pending, pub1}},
			{"publisher of three", publisher("three.example.com"), []string{pub2, internal, pub1}},
		} {
			got, err := svc.Listed(ctx, tc.p, ids)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var gotIDs []string
			for _, a := range got {
				gotIDs = append(gotIDs, a.ID)
				if a.Card == nil && a.ID != pending {
					t.Fatalf("%s: agent %s hydrated without its card", tc.name, a.ID)
				}
			}
			if len(gotIDs) != len(tc.want) {
				t.Fatalf("%s: Listed = %v, want %v", tc.name, gotIDs, tc.want)
			}
			for i := range gotIDs {
				if gotIDs[i] != tc.want[i] {
					t.Fatalf("%s: Listed = %v, want %v", tc.name, gotIDs, tc.want)
				}
			}
		}
		if got, err := svc.Listed(ctx, admin, nil); err != nil || len(got) != 0 {
			t.Fatalf("no ids: %v, %v", got, err)
		}
		if _, err := svc.Listed(ctx, admin, make([]string, 1001)); !isErr(err, registry.ErrValidation) {
			t.Fatalf("1001 ids: err = %v, want a validation error", err)
		}
	})
}

// The admin review queue lists flagged agents with the NeedsReview filter.
func TestListNeedsReviewFilter(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := newService(s, c)
		var flagged string
		for i, url := range []string{"https://a.example.com/", "https://b.example.com/", "https://c.example.com/"} {
			a := mustSubmit(t, svc, url)
			crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON(url, "1"), registry.TrustVerified, "K1"))
			if _, err := svc.Act(ctx, admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)}); err != nil {
				t.Fatal(err)
			}
			if i == 1 {
				flagged = a.ID
			}
		}
		// The second agent's card arrives unsigned: a trust regression (D.49).
		makeDue(c)
		crawl(t, svc, c, flagged, okResult(t, c.Now(), cardJSON("b", "2"), registry.TrustUnsigned))
		yes, no := true, false
		page, err := svc.List(ctx, admin, registry.ListQuery{NeedsReview: &yes})
		if err != nil || page.TotalSize != 1 || len(page.Agents) != 1 || page.Agents[0].ID != flagged || !page.Agents[0].NeedsReview {
			t.Fatalf("NeedsReview=true: %+v, %v", page, err)
		}
		page, err = svc.List(ctx, admin, registry.ListQuery{NeedsReview: &no, PageSize: 1})
		if err != nil || page.TotalSize != 2 || page.NextPageToken == "" {
			t.Fatalf("NeedsReview=false: %+v, %v", page, err)
		}
		// A page token is bound to its filter.
		if _, err := svc.List(ctx, admin, registry.ListQuery{NeedsReview: &yes, PageToken: page.NextPageToken}); !isErr(err, registry.ErrInvalidPageToken) {
			t.Fatalf("token reused with another filter: %v", err)
		}
	})
}

// Listed reads a record as Get reads it (Get adds the liveness detail of
// one agent), for agents with signatures and problems, with a failed last
// fetch and without any version; ListedViews reads the same records with
// each card as its stored view.
func TestListedSameRecordAsGet(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := newService(s, c)
		signed := mustSubmit(t, svc, "https://signed.example.com/")
		res := okResult(t, c.Now(), cardJSON("signed", "1"), registry.TrustVerified, "K1")
		res.Signatures = []registry.SignatureResult{{Index: 0, Kid: "k1", Alg: "ES256", KeySource: "well-known", Status: "verified", Thumbprint: "K1"},
			{Index: 1, Kid: "k2", Alg: "ES256", KeySource: "jku", Status: "error", Reason: "key set at 10.0.0.1 unreachable"}}
		res.Problems = []agentcard.Problem{{Pointer: "/skills/0", Severity: agentcard.SeverityWarning, Code: "x-test", Message: "a warning"}}
		crawl(t, svc, c, signed.ID, res)
		failing := mustSubmit(t, svc, "https://failing.example.com/")
		crawl(t, svc, c, failing.ID, okResult(t, c.Now(), cardJSON("failing", "1"), registry.TrustUnsigned))
		for _, id := range []string{signed.ID, failing.ID} {
			if _, err := svc.Act(ctx, admin, id, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)}); err != nil {
				t.Fatal(err)
			}
		}
		makeDue(c)
		crawl(t, svc, c, failing.ID, errResult(c.Now(), "connect", 0))
		bare := mustSubmit(t, svc, "https://bare.example.com/")
		ids := []string{signed.ID, failing.ID, bare.ID}

		for _, p := range []registry.Principal{admin, anonymous} {
			listed, err := svc.Listed(ctx, p, ids)
			if err != nil {
				t.Fatal(err)
			}
			want := 3
			if p.Role == "" {
				want = 2 // the pending one is not listed
			}
			if len(listed) != want {
				t.Fatalf("%q lists %d agents, want %d", p.Role, len(listed), want)
			}
			for _, a := range listed {
				g, err := svc.Get(ctx, p, a.ID)
				if err != nil {
					t.Fatal(err)
				}
				if l, gl := a.Liveness, g.Liveness; l == nil || gl == nil || l.State != gl.State || l.Probing != gl.Probing ||
					!reflect.DeepEqual(l.Since, gl.Since) || !reflect.DeepEqual(l.FailingSince, gl.FailingSince) {
					t.Fatalf("%s: liveness %+v, Get has %+v", a.ID, l, gl)
				}
				g.Liveness = a.Liveness
				if !reflect.DeepEqual(a, *g) {
					t.Fatalf("%q, %s: Listed\n%+v\nGet\n%+v", p.Role, a.ID, a, *g)
				}
			}
			if a := listed[0]; len(a.Signatures) != 2 || len(a.Problems) != 1 || a.Card == nil || a.Card.Name != "signed" {
				t.Fatalf("signed agent read as %+v", a)
			}
			if a := listed[1]; a.LastError == nil || a.LastError.Class != "connect" || a.FailingSince == nil || a.Card == nil {
				t.Fatalf("failing agent read as %+v", a)
			}

			// ListedViews: the same records, each card as its stored view.
			viewed, err := svc.ListedViews(ctx, p, ids)
			if err != nil {
				t.Fatal(err)
			}
			if len(viewed) != len(listed) {
				t.Fatalf("ListedViews lists %d agents, Listed %d", len(viewed), len(listed))
			}
			for i, a := range viewed {
				want := listed[i]
				if want.Card == nil {
					if a.Card != nil || a.CardView != nil {
						t.Fatalf("%s: without a version, card %v view %v", a.ID, a.Card, a.CardView)
					}
					continue
				}
				wantJSON, err := want.Card.ViewJSON()
				if err != nil {
					t.Fatal(err)
				}
				v := a.CardView
				if a.Card != nil || v == nil || !bytes.Equal(v.JSON, wantJSON) || v.Shape != want.Card.Shape ||
					!slices.Equal(v.ProtocolVersions, want.Card.ProtocolVersions) {
					t.Fatalf("%s: ListedViews card %v, view %+v; want the view\n%s", a.ID, a.Card, v, wantJSON)
				}
				wantProblems, err := json.Marshal(want.Problems)
				if err != nil {
					t.Fatal(err)
				}
				if a.Problems != nil || !bytes.Equal(v.Problems, wantProblems) {
					t.Fatalf("%s: problems %v, view's %s; want nil and %s", a.ID, a.Problems, v.Problems, wantProblems)
				}
				a.Card, a.Problems, a.CardView = want.Card, want.Problems, nil
				if !reflect.DeepEqual(a, want) {
					t.Fatalf("ListedViews %+v\nListed %+v", a, want)
				}
			}
		}
	})
}
