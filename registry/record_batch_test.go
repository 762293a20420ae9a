package registry_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// recordModes record a round of results for agents claimed by "w1": one
// RecordFetch per result, or all of them in one RecordFetches batch. Both
// must leave the same state (RecordFetch is a batch of one).
var recordModes = map[string]func(t *testing.T, svc *registry.Service, batch []registry.AgentFetch) []error{
	"one at a time": func(t *testing.T, svc *registry.Service, batch []registry.AgentFetch) []error {
		errs := make([]error, len(batch))
		for i, f := range batch {
			errs[i] = svc.RecordFetch(t.Context(), "w1", f.AgentID, f.Result)
		}
		return errs
	},
	"in one batch": func(t *testing.T, svc *registry.Service, batch []registry.AgentFetch) []error {
		errs, err := svc.RecordFetches(t.Context(), "w1", batch)
		if err != nil {
			t.Fatalf("RecordFetches: %v", err)
		}
		if len(errs) != len(batch) {
			t.Fatalf("%d answers for %d results", len(errs), len(batch))
		}
		return errs
	},
}

// reverified is a 304 whose crawler re-verified the stored bytes raw.
func reverified(at time.Time, raw []byte, trust registry.Trust, thumbs ...string) registry.FetchResult {
	return registry.FetchResult{Attempt: registry.FetchAttempt{At: at, URL: "https://a.example.com/.well-known/agent-card.json", HTTPStatus: 304},
		NotModified: true, Raw: raw, Trust: trust, Thumbprints: thumbs, NextFetchAt: at.Add(time.Hour)}
}

func notModified(at time.Time) registry.FetchResult {
	return registry.FetchResult{Attempt: registry.FetchAttempt{At: at, URL: "https://a.example.com/.well-known/agent-card.json", HTTPStatus: 304},
		NotModified: true, NextFetchAt: at.Add(time.Hour)}
}

// TestRecordFetchesSameAsOneAtATime: three crawl rounds over five agents
// covering every RecordFetch path (new version, 304, same bytes, trust
// regression → candidate, failure → failing → gone after three 404s,
// re-verified 304 changing trust both ways) end in the same agents,
// versions, traces and change-log rows whether each round is recorded one
// result at a time or as one batch.
func TestRecordFetchesSameAsOneAtATime(t *testing.T) {
	for mode, record := range recordModes {
		t.Run(mode, func(t *testing.T) {
			registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
				c := newClock()
				svc := newService(s, c)
				var ids []string
				for _, h := range []string{"a", "b", "c", "d", "e"} {
					ids = append(ids, mustSubmit(t, svc, "https://"+h+".example.com/").ID)
				}
				_, mark := changeKinds(t, svc, 0)
				v1, v2, e1 := cardJSON("A", "1"), cardJSON("B", "2"), cardJSON("E", "1")
				rounds := [][]registry.FetchResult{
					{okResult(t, c.Now(), v1, registry.TrustUnsigned), okResult(t, c.Now(), v1, registry.TrustVerified, "t1"),
						errResult(c.Now(), "dns", 0), errResult(c.Now(), "http_status", 404), okResult(t, c.Now(), e1, registry.TrustVerified, "t1")},
					{notModified(c.Now()), okResult(t, c.Now(), v2, registry.TrustUntrusted),
						okResult(t, c.Now(), v1, registry.TrustUnsigned), errResult(c.Now(), "http_status", 404), reverified(c.Now(), e1, registry.TrustError)},
					{okResult(t, c.Now(), v1, registry.TrustUnsigned), notModified(c.Now()),
						errResult(c.Now(), "timeout", 0), errResult(c.Now(), "http_status", 410), reverified(c.Now(), e1, registry.TrustVerified, "t1")},
				}
				for r, results := range rounds {
					if r > 0 {
						makeDue(c)
					}
					if got, err := svc.ClaimDue(t.Context(), "w1", c.Now(), time.Minute, 100, 100); err != nil || len(got) != len(ids) {
						t.Fatalf("round %d: claimed %d, %v", r, len(got), err)
					}
					var batch []registry.AgentFetch
					for i, res := range results {
						res.Attempt.At, res.NextFetchAt = c.Now(), c.Now().Add(time.Hour)
						batch = append(batch, registry.AgentFetch{AgentID: ids[i], Result: res})
					}
					for i, err := range record(t, svc, batch) {
						if err != nil {
							t.Fatalf("round %d result %d: %v", r, i, err)
						}
					}
				}
				want := []struct {
					seq     int64
					trust   registry.Trust
					health  registry.Health
					review  bool
					kinds   []string
					results []string
				}{
					{1, registry.TrustUnsigned, registry.HealthOK, false, []string{"changed", "health", "trust"}, []string{"unchanged", "unchanged", "new-version"}},
					{1, registry.TrustVerified, registry.HealthOK, true, []string{"changed", "health", "trust", "changed"}, []string{"unchanged", "new-version", "new-version"}},
					{1, registry.TrustUnsigned, registry.HealthFailing, false, []string{"health", "changed", "health", "trust", "health"}, []string{"error", "new-version", "error"}},
					{0, registry.TrustUnknown, registry.HealthGone, false, []string{"health", "health"}, []string{"error", "error", "error"}},
					{1, registry.TrustVerified, registry.HealthOK, false, []string{"changed", "health", "trust", "trust", "trust"}, []string{"unchanged", "unchanged", "new-version"}},
				}
				cs, _, err := svc.Changes(t.Context(), admin, mark, 1000)
				if err != nil {
					t.Fatal(err)
				}
				for i, w := range want {
					a, err := svc.Get(t.Context(), admin, ids[i])
					if err != nil {
						t.Fatal(err)
					}
					if a.VersionSeq != w.seq || a.Trust != w.trust || a.Health != w.health || a.NeedsReview != w.review {
						t.Errorf("agent %d: version %d trust %s health %s needsReview %v; want %+v", i, a.VersionSeq, a.Trust, a.Health, a.NeedsReview, w)
					}
					var kinds []string
					for _, ch := range cs {
						if ch.AgentID == ids[i] {
							kinds = append(kinds, ch.Kind)
						}
					}
					if !slices.Equal(kinds, w.kinds) {
						t.Errorf("agent %d changes %v, want %v", i, kinds, w.kinds)
					}
					fs, err := svc.Fetches(t.Context(), admin, ids[i], 10)
					if err != nil {
						t.Fatal(err)
					}
					var results []string
					for _, f := range fs {
						results = append(results, f.Result)
					}
					if !slices.Equal(results, w.results) {
						t.Errorf("agent %d trace %v, want %v", i, results, w.results)
					}
				}
				// B's regression is the candidate; E's one version carries
				// the re-verified verdict.
				if vs, _ := svc.Versions(t.Context(), admin, ids[1]); len(vs) != 2 || !vs[0].Candidate || !vs[1].Current {
					t.Errorf("B versions %+v", vs)
				}
				if vs, _ := svc.Versions(t.Context(), admin, ids[4]); len(vs) != 1 || vs[0].Trust != registry.TrustVerified || !slices.Equal(vs[0].Thumbprints, []string{"t1"}) {
					t.Errorf("E versions %+v", vs)
				}
			})
		})
	}
}

// TestRecordFetchesPerResultAnswers: in one batch, a result whose lease is
// another owner's, one for an agent removed while it was crawled
// (docs/threats.md F.64), a success without a card, an unknown agent and a
// second result for an agent already recorded in the batch each get their
// own answer and write nothing, while the other results are recorded.
func TestRecordFetchesPerResultAnswers(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		var ids []string
		for i := range 4 {
			ids = append(ids, mustSubmit(t, svc, fmt.Sprintf("https://h%d.example.com/", i)).ID)
			c.Advance(time.Second) // due in submission order
		}
		claim := func(owner string) {
			if got, err := svc.ClaimDue(ctx, owner, c.Now(), time.Minute, 1, 10); err != nil || len(got) != 1 {
				t.Fatalf("claim for %s: %d, %v", owner, len(got), err)
			}
		}
		claim("w1")
		claim("w2") // ids[1] is w2's
		claim("w1")
		claim("w1")
		if _, err := svc.Act(ctx, admin, ids[2], registry.ActionRemove, registry.ActionRequest{Reason: "spam"}); err != nil {
			t.Fatal(err)
		}
		ok := okResult(t, c.Now(), cardJSON("A", "1"), registry.TrustUnsigned)
		noCard := ok
		noCard.Card = nil
		batch := []registry.AgentFetch{
			{AgentID: ids[0], Result: ok},
			{AgentID: ids[1], Result: ok},
			{AgentID: ids[2], Result: ok},
			{AgentID: ids[3], Result: noCard},
			{AgentID: "no-such-agent", Result: ok},
			{AgentID: ids[0], Result: errResult(c.Now(), "dns", 0)},
			{AgentID: ids[3], Result: errResult(c.Now(), "dns", 0)},
		}
		errs, err := svc.RecordFetches(ctx, "w1", batch)
		if err != nil {
			t.Fatal(err)
		}
		var ve *registry.ValidationError
		if errs[0] != nil || !errors.Is(errs[1], registry.ErrLeaseLost) || !errors.Is(errs[2], registry.ErrLeaseLost) ||
			!errors.As(errs[3], &ve) || !errors.Is(errs[4], registry.ErrNotFound) || !errors.Is(errs[5], registry.ErrLeaseLost) || errs[6] != nil {
			t.Fatalf("answers %v", errs)
		}
		if a, _ := svc.Get(ctx, admin, ids[0]); a.VersionSeq != 1 || a.Health != registry.HealthOK {
			t.Errorf("recorded agent: version %d health %s", a.VersionSeq, a.Health)
		}
		if a, _ := svc.Get(ctx, admin, ids[3]); a.VersionSeq != 0 || a.Health != registry.HealthFailing {
			t.Errorf("agent with a cardless success then a failure: version %d health %s", a.VersionSeq, a.Health)
		}
		for _, id := range ids[1:3] {
			if fs, _ := svc.Fetches(ctx, admin, id, 10); len(fs) != 0 {
				t.Errorf("agent %s got %d trace rows from a lost lease", id, len(fs))
			}
		}
		if a, _ := svc.Get(ctx, admin, ids[2]); a.Status != registry.StatusRemoved || a.VersionSeq != 0 {
			t.Errorf("removed agent after the batch: %s version %d", a.Status, a.VersionSeq)
		}
		// w2's lease was untouched: its own result still records.
		if err := svc.RecordFetch(ctx, "w2", ids[1], ok); err != nil {
			t.Fatalf("w2's result: %v", err)
		}
		// An empty batch writes nothing and answers nothing.
		if errs, err := svc.RecordFetches(ctx, "w1", nil); err != nil || len(errs) != 0 {
			t.Fatalf("empty batch: %v %v", errs, err)
		}
	})
}

// A re-verified 304 whose bytes are no longer the newest version (they
// changed between claim and record) must not move the newest version's
// verdict: the verdict was about other bytes.
func TestRecordFetchesReverifiedStaleBytesIgnored(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		a := mustSubmit(t, svc, "https://a.example.com/")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "1"), registry.TrustVerified, "t1"))
		_, mark := changeKinds(t, svc, 0)
		makeDue(c)
		crawl(t, svc, c, a.ID, reverified(c.Now(), cardJSON("A", "0"), registry.TrustError))
		got, _ := svc.Get(t.Context(), admin, a.ID)
		vs, _ := svc.Versions(t.Context(), admin, a.ID)
		if got.Trust != registry.TrustVerified || len(vs) != 1 || vs[0].Trust != registry.TrustVerified {
			t.Fatalf("trust %s, versions %+v", got.Trust, vs)
		}
		if kinds, _ := changeKinds(t, svc, mark); len(kinds) != 0 {
			t.Fatalf("changes %v", kinds)
		}
	})
}
