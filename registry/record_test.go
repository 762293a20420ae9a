package registry_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

func changeKinds(t *testing.T, svc *registry.Service, after int64) ([]string, int64) {
	t.Helper()
	cs, next, err := svc.Changes(t.Context(), admin, after, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range cs {
		kinds = append(kinds, c.Kind)
	}
	return kinds, next
}

func TestRecordFetchVersions(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://a.example.com/")
		_, mark := changeKinds(t, svc, 0)
		v1 := cardJSON("Agent", "1.0.0")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), v1, registry.TrustUnsigned))
		kinds, mark := changeKinds(t, svc, mark)
		if !slices.Equal(kinds, []string{"changed", "health", "trust"}) {
			t.Fatalf("first fetch changes %v", kinds)
		}
		// The same bytes again: no new version, no change rows.
		makeDue(c)
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), v1, registry.TrustUnsigned))
		// A 304: unchanged, last_fetched_at moves.
		makeDue(c)
		notMod := registry.FetchResult{Attempt: registry.FetchAttempt{At: c.Now(), URL: a.CardURL, HTTPStatus: 304}, NotModified: true, NextFetchAt: c.Now().Add(time.Hour)}
		crawl(t, svc, c, a.ID, notMod)
		got, _ := svc.Get(ctx, anonymous, a.ID)
		if got.VersionSeq != 1 || !got.LastFetchedAt.Equal(c.Now()) || got.Health != registry.HealthOK || got.Card == nil || got.Card.Name != "Agent" {
			t.Fatalf("after unchanged fetches: %+v", got)
		}
		if kinds, _ := changeKinds(t, svc, mark); len(kinds) != 0 {
			t.Fatalf("unchanged fetches wrote changes %v", kinds)
		}
		// New bytes: version 2, current, with a diff.
		makeDue(c)
		v2 := cardJSON("Agent", "2.0.0")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), v2, registry.TrustUnsigned))
		kinds, _ = changeKinds(t, svc, mark)
		if !slices.Equal(kinds, []string{"changed"}) {
			t.Fatalf("second version changes %v", kinds)
		}
		raw, sum, err := svc.Card(ctx, anonymous, a.ID)
		want := sha256.Sum256(v2)
		if err != nil || !bytes.Equal(raw, v2) || sum != hex.EncodeToString(want[:]) {
			t.Fatalf("Card: %q %s %v", raw, sum, err)
		}
		vs, err := svc.Versions(ctx, anonymous, a.ID)
		if err != nil || len(vs) != 2 || vs[0].Seq != 2 || !vs[0].Current || vs[1].Current || vs[0].Raw != nil {
			t.Fatalf("Versions: %+v, %v", vs, err)
		}
		if len(vs[0].Diff) != 1 || vs[0].Diff[0].Kind != "version-changed" || vs[0].Diff[0].Old != "1.0.0" || vs[0].Diff[0].New != "2.0.0" {
			t.Fatalf("diff %+v", vs[0].Diff)
		}
		v, err := svc.Version(ctx, anonymous, a.ID, 1)
		if err != nil || !bytes.Equal(v.Raw, v1) || v.Current || v.Trust != registry.TrustUnsigned {
			t.Fatalf("Version 1: %+v, %v", v, err)
		}
		if _, err := svc.Version(ctx, anonymous, a.ID, 3); !errors.Is(err, registry.ErrNotFound) {
			t.Fatalf("Version 3: %v", err)
		}
		fs, err := svc.Fetches(ctx, admin, a.ID, 0)
		if err != nil || len(fs) != 4 {
			t.Fatalf("Fetches: %+v, %v", fs, err)
		}
		results := []string{fs[0].Result, fs[1].Result, fs[2].Result, fs[3].Result}
		if !slices.Equal(results, []string{"new-version", "unchanged", "unchanged", "new-version"}) || fs[3].DurationMS != 12 || fs[3].HTTPStatus != 200 {
			t.Fatalf("trace %v %+v", results, fs[3])
		}
	})
}

func TestRecordFetchErrorsAndHealth(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := registry.NewService(s, registry.ServiceConfig{Now: c.Now, GoneAfter: 48 * time.Hour})
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://a.example.com/")
		v1 := cardJSON("Agent", "1")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), v1, registry.TrustUnsigned))
		_, mark := changeKinds(t, svc, 0)
		// An error keeps the last good card (docs/design.md principle 4).
		makeDue(c)
		failAt := c.Now()
		res := errResult(c.Now(), "timeout", 0)
		res.Attempt.Message = "read\r\nX-Injected: 1\x1b[31m \xff"
		crawl(t, svc, c, a.ID, res)
		got, _ := svc.Get(ctx, anonymous, a.ID)
		if got.Health != registry.HealthFailing || got.VersionSeq != 1 || got.Card == nil || got.LastError == nil ||
			got.LastError.Class != "timeout" || !got.LastError.At.Equal(failAt) {
			t.Fatalf("after error: %+v", got)
		}
		// Anonymous callers see the class and a generic sentence.
		if got.LastError.Message != "the server took too long to answer" {
			t.Fatalf("anonymous message %q", got.LastError.Message)
		}
		got, _ = svc.Get(ctx, admin, a.ID)
		// docs/threats.md I.81: no CR/LF, escapes or invalid UTF-8 survive.
		if got.LastError.Message != "read  X-Injected: 1 [31m \uFFFD" {
			t.Fatalf("message %q", got.LastError.Message)
		}
		if raw, _, _ := svc.Card(ctx, anonymous, a.ID); !bytes.Equal(raw, v1) {
			t.Fatal("the last good card is gone")
		}
		kinds, mark := changeKinds(t, svc, mark)
		if !slices.Equal(kinds, []string{"health"}) {
			t.Fatalf("changes %v", kinds)
		}
		// 404, timeout, 404, 404: the missing streak restarts; not gone.
		for _, st := range []int{404, 0, 404, 404} {
			makeDue(c)
			class := "http_status"
			if st == 0 {
				class = "timeout"
			}
			crawl(t, svc, c, a.ID, errResult(c.Now(), class, st))
		}
		if got, _ := svc.Get(ctx, admin, a.ID); got.Health != registry.HealthFailing {
			t.Fatalf("after broken 404 streak: %s", got.Health)
		}
		// Third consecutive 404: gone.
		makeDue(c)
		crawl(t, svc, c, a.ID, errResult(c.Now(), "http_status", 410))
		if got, _ := svc.Get(ctx, admin, a.ID); got.Health != registry.HealthGone || got.VersionSeq != 1 {
			t.Fatalf("after 3 × 404/410: %+v", got)
		}
		kinds, _ = changeKinds(t, svc, mark)
		if !slices.Equal(kinds, []string{"health"}) {
			t.Fatalf("changes %v", kinds)
		}
		// Recovery: ok again, error cleared.
		makeDue(c)
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), v1, registry.TrustUnsigned))
		if got, _ := svc.Get(ctx, admin, a.ID); got.Health != registry.HealthOK || got.LastError != nil {
			t.Fatalf("after recovery: %+v", got)
		}
		// Failing longer than GoneAfter (48h here) with other errors: gone.
		for i := range 4 {
			c.Advance(20 * time.Hour)
			crawl(t, svc, c, a.ID, errResult(c.Now(), "connect", 0))
			got, _ := svc.Get(ctx, admin, a.ID)
			want := registry.HealthFailing
			if i == 3 {
				want = registry.HealthGone
			}
			if got.Health != want {
				t.Fatalf("failing for %dh: %s, want %s", 20*i, got.Health, want)
			}
		}
	})
}

// TestTrustRegression (docs/api.md "Curation and visibility", docs/threats.md D.49, C.38).
func TestTrustRegression(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://a.example.com/")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "1"), registry.TrustVerified, "K1"))
		if _, err := svc.Act(ctx, admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)}); err != nil {
			t.Fatal(err)
		}
		// Rotation with overlap (K1 and K2 both verify): not a regression.
		makeDue(c)
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "2"), registry.TrustVerified, "K1", "K2"))
		got, _ := svc.Get(ctx, anonymous, a.ID)
		if got.VersionSeq != 2 || got.NeedsReview || got.Trust != registry.TrustVerified {
			t.Fatalf("rotation: %+v", got)
		}
		v2, _ := svc.Version(ctx, admin, a.ID, 2)
		if k := v2.Diff[len(v2.Diff)-1]; k.Kind != "key-changed" {
			t.Fatalf("diff %+v lacks key-changed", v2.Diff)
		}
		// Verified by a key never seen verified (K3 only): regression.
		for i, tc := range []struct {
			trust  registry.Trust
			thumbs []string
		}{{registry.TrustVerified, []string{"K3"}}, {registry.TrustUnsigned, nil}, {registry.TrustInvalid, nil}, {registry.TrustUntrusted, nil}, {registry.TrustError, nil}} {
			makeDue(c)
			seqNo := int64(3 + i)
			crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "r"+itoa(i)), tc.trust, tc.thumbs...))
			got, _ := svc.Get(ctx, anonymous, a.ID)
			if got.VersionSeq != 2 || !got.NeedsReview || got.Trust != registry.TrustVerified || got.Status != registry.StatusApproved || got.Card.Version != "2" {
				t.Fatalf("%s/%v: %+v", tc.trust, tc.thumbs, got)
			}
			vs, _ := svc.Versions(ctx, admin, a.ID)
			if vs[0].Seq != seqNo || !vs[0].Candidate || vs[0].Current || !vs[len(vs)-2].Current {
				t.Fatalf("%s: versions %+v", tc.trust, vs)
			}
		}
		// Re-approval names the candidate (7), not the current version.
		var vc *registry.VersionConflictError
		if _, err := svc.Act(ctx, admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(2)}); !errors.As(err, &vc) || vc.CurrentVersionSeq != 7 {
			t.Fatalf("approve current of flagged agent: %v", err)
		}
		got, err := svc.Act(ctx, admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(7), Reason: "key error accepted"})
		if err != nil || got.VersionSeq != 7 || got.NeedsReview || got.Trust != registry.TrustError {
			t.Fatalf("re-approve: %+v, %v", got, err)
		}
		// Once the agent is no longer verified, new versions become current.
		makeDue(c)
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "8"), registry.TrustUnsigned))
		if got, _ := svc.Get(ctx, anonymous, a.ID); got.VersionSeq != 8 || got.NeedsReview {
			t.Fatalf("after re-approval: %+v", got)
		}
	})
}

// TestRecordFetchLeaseGuard covers docs/threats.md F.64 and the owner check.
func TestRecordFetchLeaseGuard(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://a.example.com/")
		if d, err := svc.ClaimDue(ctx, "w1", c.Now(), time.Minute, 10, 2); err != nil || len(d) != 1 {
			t.Fatalf("claim: %v, %v", d, err)
		}
		res := okResult(t, c.Now(), cardJSON("A", "1"), registry.TrustUnsigned)
		if err := svc.RecordFetch(ctx, "w2", a.ID, res); !errors.Is(err, registry.ErrLeaseLost) {
			t.Fatalf("foreign owner: %v", err)
		}
		if err := svc.RecordFetch(ctx, "w1", a.ID, res); err != nil {
			t.Fatal(err)
		}
		if err := svc.RecordFetch(ctx, "w1", a.ID, res); !errors.Is(err, registry.ErrLeaseLost) {
			t.Fatalf("second record on a cleared lease: %v", err)
		}
		// F.64: the crawl finishes after an admin removed the agent.
		makeDue(c)
		if d, err := svc.ClaimDue(ctx, "w1", c.Now(), time.Minute, 10, 2); err != nil || len(d) != 1 {
			t.Fatalf("claim: %v, %v", d, err)
		}
		if _, err := svc.Act(ctx, admin, a.ID, registry.ActionRemove, registry.ActionRequest{}); err != nil {
			t.Fatal(err)
		}
		_, mark := changeKinds(t, svc, 0)
		before, _ := svc.Fetches(ctx, admin, a.ID, 0)
		late := okResult(t, c.Now(), cardJSON("A", "2"), registry.TrustUnsigned)
		if err := svc.RecordFetch(ctx, "w1", a.ID, late); !errors.Is(err, registry.ErrLeaseLost) {
			t.Fatalf("record after remove: %v", err)
		}
		got, _ := svc.Get(ctx, admin, a.ID)
		after, _ := svc.Fetches(ctx, admin, a.ID, 0)
		vs, _ := svc.Versions(ctx, admin, a.ID)
		kinds, _ := changeKinds(t, svc, mark)
		if got.Status != registry.StatusRemoved || len(vs) != 1 || len(after) != len(before) || len(kinds) != 0 {
			t.Fatalf("late record changed something: %+v, %d versions, %d→%d attempts, changes %v", got, len(vs), len(before), len(after), kinds)
		}
		// Removed agents are never claimed.
		makeDue(c)
		if d, _ := svc.ClaimDue(ctx, "w1", c.Now(), time.Minute, 10, 2); len(d) != 0 {
			t.Fatalf("removed agent claimed: %+v", d)
		}
	})
}

func TestFetchTraceIsBounded(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := registry.NewService(s, registry.ServiceConfig{Now: c.Now, KeepFetchAttempts: 5})
		a := mustSubmit(t, svc, "https://a.example.com/")
		other := mustSubmit(t, svc, "https://b.example.com/")
		for i := range 8 {
			makeDue(c)
			crawl(t, svc, c, a.ID, errResult(c.Now(), "dns", i))
		}
		crawl(t, svc, c, other.ID, errResult(c.Now(), "dns", 0))
		fs, err := svc.Fetches(t.Context(), admin, a.ID, 100)
		if err != nil || len(fs) != 5 || fs[0].HTTPStatus != 7 || fs[4].HTTPStatus != 3 {
			t.Fatalf("trace %+v, %v", fs, err)
		}
		if fs, _ := svc.Fetches(t.Context(), admin, other.ID, 0); len(fs) != 1 {
			t.Fatalf("other agent's trace: %d", len(fs))
		}
		// The crawl trace is for admins and the host's publisher.
		if _, err := svc.Fetches(t.Context(), publisher("a.example.com"), a.ID, 0); err != nil {
			t.Fatal(err)
		}
		for _, p := range []registry.Principal{anonymous, reader, publisher("b.example.com")} {
			if _, err := svc.Fetches(t.Context(), p, a.ID, 0); !errors.Is(err, denied(p)) {
				t.Errorf("%q: %v", p.Role, err)
			}
		}
	})
}

// A failure's words can name internal addresses and resolvers: only admins
// see them; anonymous and publisher callers (of the agent's own host too)
// see the class, the status and a generic sentence, in the record, the
// lists, the crawl trace and the signatures.
func TestFailureDetailsAreForAdmins(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		c := newClock()
		svc := newService(s, c)
		a := mustSubmit(t, svc, "https://inside.example.com/")
		const detail = "refusing to connect to reserved address ::ffff:10.20.30.40 (resolver 10.0.0.53:53)"
		res := errResult(c.Now(), "blocked_address", 0)
		res.Attempt.Message = detail
		crawl(t, svc, c, a.ID, res)
		pub := publisher("inside.example.com")
		for _, p := range []registry.Principal{anonymous, reader, pub} {
			got, err := svc.Get(ctx, p, a.ID)
			if err != nil || got.LastError == nil || got.LastError.Class != "blocked_address" ||
				got.LastError.Message != "the address is not one this registry fetches from" {
				t.Fatalf("%q record: %+v, %v", p.Role, got.LastError, err)
			}
		}
		page, err := svc.List(ctx, pub, registry.ListQuery{})
		if err != nil || len(page.Agents) != 1 || strings.Contains(page.Agents[0].LastError.Message, "10.20") {
			t.Fatalf("publisher list: %+v, %v", page, err)
		}
		fs, err := svc.Fetches(ctx, pub, a.ID, 0)
		if err != nil || len(fs) != 1 || fs[0].ErrorClass != "blocked_address" || strings.Contains(fs[0].Message, "10.20") {
			t.Fatalf("publisher trace: %+v, %v", fs, err)
		}
		got, err := svc.Get(ctx, admin, a.ID)
		if err != nil || got.LastError.Message != detail {
			t.Fatalf("admin record: %+v, %v", got.LastError, err)
		}
		if fs, _ := svc.Fetches(ctx, admin, a.ID, 0); len(fs) != 1 || fs[0].Message != detail {
			t.Fatalf("admin trace: %+v", fs)
		}
	})
}

// Declining a flagged candidate (docs/api.md "Curation and visibility"):
// reject with the candidate's versionSeq keeps the last verified version
// current and the agent approved, clears the flag while the host keeps
// serving the declined card, flags again when the card changes, and the
// audit log says who declined which version.
func TestDeclineFlaggedCandidate(t *testing.T) {
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
		unsigned := cardJSON("A", "2-unsigned")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), unsigned, registry.TrustUnsigned))
		if got, _ := svc.Get(ctx, admin, a.ID); !got.NeedsReview || got.VersionSeq != 1 {
			t.Fatalf("not flagged: %+v", got)
		}
		_, before := changeKinds(t, svc, 0)
		// A decision bound to another version is a conflict, as for approve.
		var vc *registry.VersionConflictError
		if _, err := svc.Act(ctx, admin, a.ID, registry.ActionReject, registry.ActionRequest{VersionSeq: seq(1)}); !errors.As(err, &vc) || vc.CurrentVersionSeq != 2 {
			t.Fatalf("decline of the current version: %v", err)
		}
		got, err := svc.Act(ctx, admin, a.ID, registry.ActionReject, registry.ActionRequest{VersionSeq: seq(2), Reason: "not signed by the publisher"})
		if err != nil || got.Status != registry.StatusApproved || got.NeedsReview || got.VersionSeq != 1 ||
			got.Trust != registry.TrustVerified || got.Card.Version != "1" {
			t.Fatalf("decline: %+v, %v", got, err)
		}
		// Repeating it is a no-op: nothing is flagged any more.
		if _, err := svc.Act(ctx, admin, a.ID, registry.ActionReject, registry.ActionRequest{}); !errors.Is(err, registry.ErrInvalidTransition) {
			t.Fatalf("second decline: %v", err)
		}
		page, err := svc.AuditLog(ctx, admin, registry.AuditQuery{AgentID: a.ID, Actions: []string{"reject"}})
		if err != nil || len(page.Entries) != 1 {
			t.Fatalf("audit: %+v, %v", page, err)
		}
		e := page.Entries[0]
		if e.ActorName != admin.Name || e.Reason != "not signed by the publisher" || e.Detail["from"] != "approved" || e.Detail["to"] != "approved" ||
			e.Detail["declinedVersionSeq"] != float64(2) || e.Detail["currentVersionSeq"] != float64(1) {
			t.Fatalf("audit entry %+v", e)
		}
		// Nothing listed or read changed: no change-log entry.
		if kinds, _ := changeKinds(t, svc, before); len(kinds) != 0 {
			t.Fatalf("decline wrote changes %v", kinds)
		}
		// The host keeps serving the declined card: still declined.
		makeDue(c)
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), unsigned, registry.TrustUnsigned))
		if got, _ := svc.Get(ctx, admin, a.ID); got.NeedsReview || got.VersionSeq != 1 {
			t.Fatalf("the declined card flagged again: %+v", got)
		}
		// A card that changes again is reviewed again.
		makeDue(c)
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "3-unsigned"), registry.TrustUnsigned))
		if got, _ := svc.Get(ctx, admin, a.ID); !got.NeedsReview || got.VersionSeq != 1 {
			t.Fatalf("a changed card is not flagged: %+v", got)
		}
		vs, _ := svc.Versions(ctx, admin, a.ID)
		if vs[0].Seq != 3 || !vs[0].Candidate || !vs[len(vs)-1].Current {
			t.Fatalf("versions %+v", vs)
		}
	})
}
