package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// A stored version's view is written with it; ListedViews hands it out in
// place of the card, falls back to the card for a version whose view is
// missing or of another revision, and RenderViews stores exactly those,
// over several batches, after which nothing is left to render.
func TestCardViewsWrittenListedAndRendered(t *testing.T) {
	t.Cleanup(registry.SetRenderViewsBatch(2)) // EachStore runs its variants in parallel
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := newService(s, c)
		db := s.WriteDB()
		var ids []string
		for i := range 5 {
			a := mustSubmit(t, svc, fmt.Sprintf("https://v%d.example.com/", i))
			crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON(fmt.Sprintf("Agent %d", i), "1"), registry.TrustUnsigned))
			ids = append(ids, a.ID)
		}
		pending := mustSubmit(t, svc, "https://never-fetched.example.com/").ID
		ids = append(ids, pending)
		// A second version of agent 0: its view is stored beside the first.
		c.Advance(2 * 3600e9)
		crawl(t, svc, c, ids[0], okResult(t, c.Now(), cardJSON("Agent 0 again", "2"), registry.TrustUnsigned))

		count := func(where string, args ...any) int64 {
			t.Helper()
			var n int64
			if err := db.Raw("SELECT COUNT(*) FROM card_views WHERE "+where, args...).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := count("rev = ?", agentcard.ViewRevision); n != 6 {
			t.Fatalf("%d views stored, want 6 (one per version)", n)
		}
		if n, err := svc.RenderViews(ctx); n != 0 || err != nil {
			t.Fatalf("RenderViews with every view stored: %d, %v", n, err)
		}

		listed, err := svc.Listed(ctx, admin, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) != 6 || listed[0].Card == nil || listed[0].Card.Name != "Agent 0 again" {
			t.Fatalf("Listed: %d agents, first %+v", len(listed), listed[0].Card)
		}
		// check lists ids through ListedViews: the agents in fromCard come
		// with their card, every other one with a version with its view,
		// which is the card's view.
		check := func(fromCard ...string) {
			t.Helper()
			got, err := svc.ListedViews(ctx, admin, ids)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(listed) {
				t.Fatalf("ListedViews: %d agents, want %d", len(got), len(listed))
			}
			for i, a := range got {
				want := listed[i]
				switch {
				case a.ID == pending:
					if a.Card != nil || a.CardView != nil {
						t.Fatalf("the pending agent comes with a card %v or view %v", a.Card, a.CardView)
					}
				case contains(fromCard, a.ID):
					if a.CardView != nil || a.Card == nil || a.Card.Name != want.Card.Name {
						t.Fatalf("%s: view %v, card %v; want the card", a.ID, a.CardView, a.Card)
					}
				default:
					wantJSON, err := want.Card.ViewJSON()
					if err != nil {
						t.Fatal(err)
					}
					if a.Card != nil || a.CardView == nil || !bytes.Equal(a.CardView.JSON, wantJSON) {
						t.Fatalf("%s: card %v, view %+v; want the view %s", a.ID, a.Card, a.CardView, wantJSON)
					}
				}
			}
			// ListedSummaries: every agent with a card comes with its
			// summary (stored, or made from the card where no view of this
			// revision is stored), never its card or problems.
			sums, err := svc.ListedSummaries(ctx, admin, ids)
			if err != nil || len(sums) != len(listed) {
				t.Fatalf("ListedSummaries: %d agents, %v", len(sums), err)
			}
			for i, a := range sums {
				want := listed[i]
				if a.ID == pending {
					if a.Card != nil || a.CardView != nil {
						t.Fatalf("the pending agent comes with a card %v or summary %v", a.Card, a.CardView)
					}
					continue
				}
				wantSum, err := want.Card.SummaryJSON()
				if err != nil {
					t.Fatal(err)
				}
				if a.Card != nil || a.Problems != nil || a.CardView == nil || a.CardView.JSON != nil ||
					!bytes.Equal(a.CardView.Summary, wantSum) || a.CardView.Shape != want.Card.Shape || a.Trust != want.Trust {
					t.Fatalf("%s: card %v, view %+v; want the summary %s", a.ID, a.Card, a.CardView, wantSum)
				}
			}
		}
		check()
		if n := count("rev = ? AND summary IS NOT NULL", agentcard.ViewRevision); n != 6 {
			t.Fatalf("%d summaries stored, want 6", n)
		}

		// Versions stored before views existed, or by a release that
		// rendered them at another revision.
		if err := db.Exec("DELETE FROM card_views WHERE agent_id IN (?, ?, ?)", ids[1], ids[2], ids[3]).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("UPDATE card_views SET rev = ?, rendered = ? WHERE agent_id = ? AND seq = 2",
			agentcard.ViewRevision+1, []byte(`{"stale":true}`), ids[0]).Error; err != nil {
			t.Fatal(err)
		}
		check(ids[0], ids[1], ids[2], ids[3])

		n, err := svc.RenderViews(ctx)
		if err != nil || n != 4 {
			t.Fatalf("RenderViews: %d, %v; want 4 rendered", n, err)
		}
		check()
		if got := count("rev = ?", agentcard.ViewRevision); got != 6 {
			t.Fatalf("%d views of this revision after RenderViews, want 6", got)
		}
		if got := count("agent_id = ? AND seq = 1", ids[0]); got != 1 {
			t.Fatal("the view of a version that is no longer current was dropped")
		}
		if n, err := svc.RenderViews(ctx); n != 0 || err != nil {
			t.Fatalf("RenderViews again: %d, %v", n, err)
		}

		// A cancelled RenderViews stores nothing more and says why.
		if err := db.Exec("DELETE FROM card_views").Error; err != nil {
			t.Fatal(err)
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if n, err := svc.RenderViews(cancelled); n != 0 || !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled RenderViews: %d, %v", n, err)
		}
		check(ids[:5]...)
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A re-verification that changes a version's verdict (keys changed) is
// what ListedViews shows at once: the view's copy of the verdict is
// written with the version's, and a view rendered later carries the
// verdict of then.
func TestCardViewsFollowVerdict(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := newService(s, c)
		a := mustSubmit(t, svc, "https://signed.example.com/")
		raw := cardJSON("Signed", "1")
		res := okResult(t, c.Now(), raw, registry.TrustVerified, "K1")
		res.Signatures = []registry.SignatureResult{{Index: 0, Kid: "k1", Alg: "ES256", KeySource: "well-known", Status: "verified", Thumbprint: "K1"}}
		res.Problems = []agentcard.Problem{{Pointer: "/name", Severity: "warning", Code: "odd-name", Message: "odd"}}
		crawl(t, svc, c, a.ID, res)
		same := func(wantStatus string) {
			t.Helper()
			listed, err := svc.Listed(ctx, admin, []string{a.ID})
			if err != nil || len(listed) != 1 {
				t.Fatalf("Listed: %v, %d agents", err, len(listed))
			}
			viewed, err := svc.ListedViews(ctx, admin, []string{a.ID})
			if err != nil || len(viewed) != 1 || viewed[0].CardView == nil {
				t.Fatalf("ListedViews: %v, %+v", err, viewed)
			}
			l, v := listed[0], viewed[0]
			if want, _ := json.Marshal(l.Problems); !bytes.Equal(v.CardView.Problems, want) {
				t.Fatalf("the view's problems %s; want them as encoding/json writes them: %s", v.CardView.Problems, want)
			}
			if err := json.Unmarshal(v.CardView.Problems, &v.Problems); err != nil {
				t.Fatalf("the view's problems %q: %v", v.CardView.Problems, err)
			}
			if len(v.Signatures) != 1 || v.Signatures[0].Status != wantStatus || v.Trust != l.Trust ||
				!reflect.DeepEqual(v.Signatures, l.Signatures) || !reflect.DeepEqual(v.Problems, l.Problems) || len(v.Problems) != 1 {
				t.Fatalf("ListedViews signatures %+v problems %+v trust %s; Listed %+v %+v %s; want status %s",
					v.Signatures, v.Problems, v.Trust, l.Signatures, l.Problems, l.Trust, wantStatus)
			}
		}
		same("verified")

		// The key went away: the same bytes, re-verified, no longer verify.
		makeDue(c)
		again := reverified(c.Now(), raw, registry.TrustError)
		again.Signatures = []registry.SignatureResult{{Index: 0, Kid: "k1", Alg: "ES256", KeySource: "well-known", Status: "unknown-key"}}
		crawl(t, svc, c, a.ID, again)
		same("unknown-key")

		// Rendered again (another revision's view): the verdict of now,
		// and problems stored in another form (an older release's) as
		// encoding/json writes them.
		if err := s.WriteDB().Exec("DELETE FROM card_views").Error; err != nil {
			t.Fatal(err)
		}
		if err := s.WriteDB().Exec(`UPDATE card_versions SET problems = ? WHERE agent_id = ?`,
			`[ {"message": "odd", "code": "odd-name", "pointer": "/name", "severity": "warning"} ]`, a.ID).Error; err != nil {
			t.Fatal(err)
		}
		if n, err := svc.RenderViews(ctx); n != 1 || err != nil {
			t.Fatalf("RenderViews: %d, %v", n, err)
		}
		same("unknown-key")
	})
}
