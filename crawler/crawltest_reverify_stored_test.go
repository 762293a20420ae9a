package crawler_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// A database an earlier release wrote — a verified, approved hybrid agent
// whose newer version read `invalid` because its unsigned v0.3 members
// disagreed, kept as a candidate for review — is judged again after the
// upgrade: migration 00170 marks the version, ReverifyStored verifies its
// stored bytes without fetching the card, the version becomes verified and
// current with its signed view, and the change log gets one `trust` entry.
func TestUpgradedDatabaseReverifiesCoverageVerdicts(t *testing.T) {
	dir := t.TempDir()
	store := registrytest.SQLiteAt(t, dir)
	k := newSigningKey(t)
	m := newMutableAgent(t)
	m.setJWKS(jwks(t, k))
	signed := k.sign(t, hybridV1(m.Origin()), m.Origin()+"/.well-known/jwks.json")
	m.card(withMembers(signed, `"url":"`+m.Origin()+`/a2a/v03","preferredTransport":"JSONRPC","protocolVersion":"0.3.0"`))
	st := newStack(t, store, stackOptions{})
	id := st.submit(t, m.URL())
	st.crawl(t, 1)
	seq := int64(1)
	if _, err := st.svc.Act(t.Context(), admin, id, registry.ActionApprove, registry.ActionRequest{VersionSeq: &seq}); err != nil {
		t.Fatal(err)
	}
	m.card(withMembers(signed, `"url":"http://127.0.0.1:1/steal","preferredTransport":"JSONRPC","protocolVersion":"0.3.0"`))
	st.later(t, 25*time.Hour, 1)

	// What the earlier release stored, and its schema before 00170 (the
	// column and index the migration adds are dropped, then it is run).
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "cardex.db")+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old := `{"profile":"","signatures":[{"index":0,"kid":"` + k.jwk.KeyID + `","alg":"ES256","keySource":"jku","profile":"spec-v1-only","status":"invalid",` +
		`"reason":"the signature verifies under profile spec-v1-only, but members outside what that profile signs state something the signed members do not: /url, /protocolVersion",` +
		`"unsigned":["/url","/protocolVersion"]}],"thumbprints":[]}`
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"DROP INDEX card_versions_reverify", nil},
		{"ALTER TABLE card_versions DROP COLUMN reverify", nil},
		{"UPDATE card_versions SET trust = 'invalid', verdict = ? WHERE agent_id = ? AND seq = 2", []any{old, id}},
		{"UPDATE agents SET current_version_seq = 1, candidate_version_seq = 2, needs_review = 1, trust = 'verified' WHERE id = ?", []any{id}},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	if a := st.get(t, id); a.VersionSeq != 1 || !a.NeedsReview {
		t.Fatalf("the earlier release's state: current %d needsReview %v", a.VersionSeq, a.NeedsReview)
	}
	_, mark, err := st.svc.Changes(t.Context(), admin, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// Migration 00170 as the upgrade runs it.
	up, err := os.ReadFile("../migrations/sqlite/00170_reverify_coverage_verdicts.sql")
	if err != nil {
		t.Fatal(err)
	}
	stmts, _, _ := strings.Cut(string(up), "-- +goose Down")
	if _, err := db.Exec(stmts); err != nil {
		t.Fatal(err)
	}
	cardRequests := m.reqs.Load()
	n, err := st.sched.ReverifyStored(t.Context(), st.svc)
	if err != nil || n != 1 {
		t.Fatalf("judged %d: %v", n, err)
	}
	if got := m.reqs.Load(); got != cardRequests {
		t.Fatalf("%d card requests while judging stored versions", got-cardRequests)
	}
	a := st.get(t, id)
	if a.Trust != registry.TrustVerified || a.VersionSeq != 2 || a.NeedsReview || a.Status != registry.StatusApproved {
		t.Fatalf("after: trust %s current %d needsReview %v status %s", a.Trust, a.VersionSeq, a.NeedsReview, a.Status)
	}
	if got := interfaceURLs(a); !slices.Equal(got, []string{m.Origin() + "/a2a/v1", m.Origin() + "/a2a/v03"}) {
		t.Fatalf("interfaces %q", got)
	}
	if s := a.Signatures[0]; s.Status != "verified" || !slices.Equal(s.Unsigned, []string{"/url", "/preferredTransport", "/protocolVersion"}) ||
		!slices.Equal(a.NotCovered, s.Unsigned) {
		t.Fatalf("signature %+v, notCovered %q", s, a.NotCovered)
	}
	changes, _, err := st.svc.Changes(t.Context(), admin, mark, 1000)
	if err != nil || len(changes) != 1 || changes[0].AgentID != id || changes[0].Kind != registry.ChangeTrust {
		t.Fatalf("changes %+v %v", changes, err)
	}
	// Judged once: the mark is gone.
	if n, err := st.sched.ReverifyStored(t.Context(), st.svc); err != nil || n != 0 {
		t.Fatalf("again: %d %v", n, err)
	}
}
