package registry_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// Migration 00170 marks the versions an earlier release judged invalid for
// members its signature did not cover; ApplyReverify stores the new
// judgement in place. A candidate held back as a trust regression becomes
// current when a key that verified the agent before verifies it now, with
// one `trust` change-log entry; a verdict of `error` leaves the mark.
func TestReverifyMarkedVersions(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://a.example.com/")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "1"), registry.TrustVerified, "K1"))
		if _, err := svc.Act(ctx, admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)}); err != nil {
			t.Fatal(err)
		}
		makeDue(c)
		old := okResult(t, c.Now(), cardJSON("A", "2"), registry.TrustInvalid)
		old.Signatures = []registry.SignatureResult{{Index: 0, Kid: "k", Alg: "ES256", KeySource: "jku", Profile: "spec-v1-only",
			Status: "invalid", Reason: "members outside what that profile signs disagree", Unsigned: []string{"/url"}}}
		crawl(t, svc, c, a.ID, old)
		if got, _ := svc.Get(ctx, admin, a.ID); got.VersionSeq != 1 || !got.NeedsReview {
			t.Fatalf("the earlier release's state: %+v", got)
		}
		// The migration's statements, as the upgrade runs them.
		name := "sqlite/00170_reverify_coverage_verdicts.sql"
		if s.Dialect() == registry.DialectPostgres {
			name = "postgres/00170_reverify_coverage_verdicts.sql"
		}
		up, err := fs.ReadFile(s.EmbeddedMigrations(), name[strings.Index(name, "/")+1:])
		if err != nil {
			t.Fatal(err)
		}
		stmts, _, _ := strings.Cut(string(up), "-- +goose Down")
		update := stmts[strings.Index(stmts, "UPDATE card_versions"):strings.Index(stmts, "CREATE INDEX")]
		if err := s.WriteDB().Exec(update).Error; err != nil {
			t.Fatal(err)
		}
		marked, err := svc.StoredToReverify(ctx, "", 0, 10)
		if err != nil || len(marked) != 1 || marked[0].AgentID != a.ID || marked[0].Seq != 2 || string(marked[0].Raw) != string(cardJSON("A", "2")) {
			t.Fatalf("marked %+v %v", marked, err)
		}
		_, mark, err := svc.Changes(ctx, admin, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		// A key set that does not answer now: judged again at the next start.
		if err := svc.ApplyReverify(ctx, marked[0], registry.FetchResult{Trust: registry.TrustError}); err != nil {
			t.Fatal(err)
		}
		if again, _ := svc.StoredToReverify(ctx, "", 0, 10); len(again) != 1 {
			t.Fatalf("the mark went with an error verdict: %+v", again)
		}
		now := okResult(t, c.Now(), cardJSON("A", "2"), registry.TrustVerified, "K1")
		now.Profile = "spec-v1-only"
		now.Signatures = []registry.SignatureResult{{Index: 0, Kid: "k", Alg: "ES256", KeySource: "jku", Profile: "spec-v1-only",
			Status: "verified", Reason: "verified", Thumbprint: "K1", Unsigned: []string{"/url"}}}
		if err := svc.ApplyReverify(ctx, marked[0], now); err != nil {
			t.Fatal(err)
		}
		got, _ := svc.Get(ctx, admin, a.ID)
		if got.VersionSeq != 2 || got.NeedsReview || got.Trust != registry.TrustVerified || got.Card.Version != "2" ||
			len(got.NotCovered) != 1 || got.NotCovered[0] != "/url" {
			t.Fatalf("after: %+v", got)
		}
		if v, _ := svc.Version(ctx, admin, a.ID, 2); v.Trust != registry.TrustVerified || v.Signatures[0].Status != "verified" {
			t.Fatalf("version 2: %+v", v)
		}
		changes, _, err := svc.Changes(ctx, admin, mark, 1000)
		if err != nil || len(changes) != 1 || changes[0].Kind != registry.ChangeTrust {
			t.Fatalf("changes %+v %v", changes, err)
		}
		// The agent is approved and public: anonymous followers see the
		// re-judged trust too (docs/threats.md K.103 records who could list
		// it on each side).
		if anon, _, err := svc.Changes(ctx, anonymous, mark, 1000); err != nil || len(anon) != 1 || anon[0].Kind != registry.ChangeTrust {
			t.Fatalf("anonymous changes %+v %v", anon, err)
		}
		if again, _ := svc.StoredToReverify(ctx, "", 0, 10); len(again) != 0 {
			t.Fatalf("still marked: %+v", again)
		}
		// Applying again (another replica) changes nothing.
		if err := svc.ApplyReverify(ctx, marked[0], now); err != nil {
			t.Fatal(err)
		}
		if changes, _, _ := svc.Changes(ctx, admin, mark, 1000); len(changes) != 1 {
			t.Fatalf("a second apply wrote %d changes", len(changes))
		}
	})
}
