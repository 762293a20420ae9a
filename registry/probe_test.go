package registry_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// approvedAgent submits url, records a first crawl of the test card and
// approves it: an agent the prober may claim.
func approvedAgent(t *testing.T, svc *registry.Service, c *clock, url string) string {
	t.Helper()
	a := mustSubmit(t, svc, url)
	crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("Probe me", "1"), registry.TrustUnsigned))
	if _, err := svc.Act(t.Context(), admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)}); err != nil {
		t.Fatal(err)
	}
	return a.ID
}

func round(id string, at time.Time, outcomes ...string) registry.ProbeRound {
	r := registry.ProbeRound{AgentID: id, At: at, Next: at.Add(15 * time.Minute)}
	for i, o := range outcomes {
		r.Probes = append(r.Probes, registry.ProbeResult{URL: fmt.Sprintf("https://a.example.com/a2a/%d", i), Binding: "JSONRPC",
			ProtocolVersion: "1.0", Outcome: o, Latency: time.Duration(10*(i+1)) * time.Millisecond, HTTPStatus: 200, RPCCode: -32001})
	}
	return r
}

// probeOnce claims (the agent must be due) and records r.
func probeOnce(t *testing.T, svc *registry.Service, c *clock, r registry.ProbeRound) {
	t.Helper()
	due, err := svc.ClaimProbes(t.Context(), "p1", c.Now(), time.Minute, 100, 100)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range due {
		found = found || d.ID == r.AgentID
	}
	if !found {
		t.Fatalf("agent %s not due for a probe at %v (claimed %d)", r.AgentID, c.Now(), len(due))
	}
	errs, err := svc.RecordProbes(t.Context(), "p1", []registry.ProbeRound{r})
	if err != nil || errs[0] != nil {
		t.Fatalf("RecordProbes: %v %v", err, errs)
	}
	if err := svc.ReleaseProbeLeases(t.Context(), "p1"); err != nil {
		t.Fatal(err)
	}
}

func livenessKinds(t *testing.T, svc *registry.Service, id string) int {
	t.Helper()
	ch, _, err := svc.Changes(t.Context(), admin, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range ch {
		if c.AgentID == id && c.Kind == registry.ChangeLiveness {
			n++
		}
	}
	return n
}

// TestProbeClaimAndStates: only approved agents with a card are claimed,
// with the card's interfaces; rounds derive the state, the transitions are
// change-log rows, and the record shows the detail.
func TestProbeClaimAndStates(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		id := approvedAgent(t, svc, c, "https://a.example.com/agent.json")
		mustSubmit(t, svc, "https://pending.example.com/agent.json") // pending: never probed

		a, err := svc.Get(t.Context(), anonymous, id)
		if err != nil {
			t.Fatal(err)
		}
		if l := a.Liveness; l.State != registry.LivenessUnknown || !l.Probing || l.Since != nil || len(l.Interfaces) != 0 || l.Uptime.H24 != nil {
			t.Fatalf("before any probe: %+v", l)
		}
		due, err := svc.ClaimProbes(t.Context(), "p1", c.Now(), time.Minute, 10, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != 1 || due[0].ID != id || len(due[0].Interfaces) != 1 || due[0].Interfaces[0].URL != "https://a.example.com/a2a" ||
			due[0].Interfaces[0].ProtocolVersion != "1.0" || due[0].Liveness != registry.LivenessUnknown {
			t.Fatalf("claimed %+v", due)
		}
		// Leased: a second claimer gets nothing.
		if again, err := svc.ClaimProbes(t.Context(), "p2", c.Now(), time.Minute, 10, 2); err != nil || len(again) != 0 {
			t.Fatalf("second claim: %v %+v", err, again)
		}
		// Another owner may not record it.
		if errs, err := svc.RecordProbes(t.Context(), "p2", []registry.ProbeRound{round(id, c.Now(), registry.OutcomeAnswering)}); err != nil || !isErr(errs[0], registry.ErrLeaseLost) {
			t.Fatalf("record by another owner: %v %v", err, errs)
		}
		errs, err := svc.RecordProbes(t.Context(), "p1", []registry.ProbeRound{round(id, c.Now(), registry.OutcomeAnswering, registry.OutcomeAuthRequired)})
		if err != nil || errs[0] != nil {
			t.Fatal(err, errs)
		}
		first := c.Now()
		a, _ = svc.Get(t.Context(), anonymous, id)
		l := a.Liveness
		if l.State != registry.LivenessAnswering || l.Since == nil || !l.Since.Equal(first) || l.FailingSince != nil ||
			len(l.Interfaces) != 2 || *l.Uptime.H24 != 1 || *l.Uptime.D7 != 1 || *l.P50MS != 10 || len(l.Days) != 1 || l.Days[0].Up != 2 {
			t.Fatalf("after an answering round: %+v uptime %+v", l, l.Uptime)
		}
		if n := livenessKinds(t, svc, id); n != 1 {
			t.Fatalf("%d liveness changes, want 1", n)
		}
		// Not due again before the interval.
		c.Advance(10 * time.Minute)
		if due, _ := svc.ClaimProbes(t.Context(), "p1", c.Now(), time.Minute, 10, 2); len(due) != 0 {
			t.Fatalf("claimed inside the interval: %+v", due)
		}
		c.Advance(6 * time.Minute)
		probeOnce(t, svc, c, round(id, c.Now(), registry.OutcomeAnswering, registry.OutcomeUnreachable))
		degradedAt := c.Now()
		a, _ = svc.Get(t.Context(), anonymous, id)
		l = a.Liveness
		if l.State != registry.LivenessDegraded || !l.FailingSince.Equal(degradedAt) || *l.Uptime.H24 != 0.75 ||
			l.Interfaces[1].Outcome != registry.OutcomeUnreachable || !l.Interfaces[1].FailingSince.Equal(degradedAt) {
			t.Fatalf("degraded: %+v %+v", l, l.Interfaces)
		}
		// Rate limited: no verdict, the interface keeps its failing state
		// and since; nothing counts for uptime.
		c.Advance(16 * time.Minute)
		probeOnce(t, svc, c, round(id, c.Now(), registry.OutcomeAnswering, registry.OutcomeRateLimited))
		a, _ = svc.Get(t.Context(), anonymous, id)
		l = a.Liveness
		if l.State != registry.LivenessDegraded || !l.Interfaces[1].FailingSince.Equal(degradedAt) || *l.Uptime.H24 != 0.8 {
			t.Fatalf("after a rate-limited probe: %+v %+v", l, l.Interfaces)
		}
		c.Advance(16 * time.Minute)
		probeOnce(t, svc, c, round(id, c.Now(), registry.OutcomeUnreachable, registry.OutcomeUnreachable))
		a, _ = svc.Get(t.Context(), anonymous, id)
		if a.Liveness.State != registry.LivenessUnreachable || livenessKinds(t, svc, id) != 3 {
			t.Fatalf("unreachable: %+v, %d changes", a.Liveness, livenessKinds(t, svc, id))
		}
		// The card lost an interface: only the probed ones remain.
		c.Advance(16 * time.Minute)
		probeOnce(t, svc, c, round(id, c.Now(), registry.OutcomeNonconformant))
		a, _ = svc.Get(t.Context(), anonymous, id)
		if len(a.Liveness.Interfaces) != 1 || a.Liveness.State != registry.LivenessDegraded {
			t.Fatalf("one interface left: %+v", a.Liveness)
		}
		// History, newest first, paged.
		ps, next, err := svc.Probes(t.Context(), anonymous, id, 4, "")
		if err != nil || len(ps) != 4 || next == "" || ps[0].Outcome != registry.OutcomeNonconformant || ps[0].ID <= ps[1].ID {
			t.Fatalf("page 1: %v %q %+v", err, next, ps)
		}
		rest, next2, err := svc.Probes(t.Context(), anonymous, id, 100, next)
		if err != nil || len(rest) != 5 || next2 != "" || rest[0].ID >= ps[3].ID {
			t.Fatalf("page 2: %v %q %d", err, next2, len(rest))
		}
		for _, bad := range []string{"x", "cHJvYmU6MA", "bm90LWEtcHJvYmU6MQ"} {
			if _, _, err := svc.Probes(t.Context(), anonymous, id, 4, bad); !isErr(err, registry.ErrInvalidPageToken) {
				t.Errorf("token %q: %v", bad, err)
			}
		}
		if _, _, err := svc.Probes(t.Context(), anonymous, "nope", 4, ""); !isErr(err, registry.ErrNotFound) {
			t.Errorf("unknown agent: %v", err)
		}
	})
}

// TestProbingOffSwitch: an admin turns probing off (not claimed, unknown,
// a liveness change) and on again (due at once); others may not.
func TestProbingOffSwitch(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		id := approvedAgent(t, svc, c, "https://a.example.com/agent.json")
		probeOnce(t, svc, c, round(id, c.Now(), registry.OutcomeAnswering))
		if _, err := svc.SetProbing(t.Context(), reader, id, false); !isErr(err, registry.ErrForbidden) {
			t.Fatalf("reader: %v", err)
		}
		a, err := svc.SetProbing(t.Context(), admin, id, false)
		if err != nil || a.Liveness.Probing || a.Liveness.State != registry.LivenessUnknown {
			t.Fatalf("off: %v %+v", err, a.Liveness)
		}
		c.Advance(time.Hour)
		if due, _ := svc.ClaimProbes(t.Context(), "p1", c.Now(), time.Minute, 10, 2); len(due) != 0 {
			t.Fatalf("claimed with probing off: %+v", due)
		}
		if n := livenessKinds(t, svc, id); n != 2 {
			t.Fatalf("%d liveness changes, want 2", n)
		}
		if _, err := svc.SetProbing(t.Context(), admin, id, true); err != nil {
			t.Fatal(err)
		}
		probeOnce(t, svc, c, round(id, c.Now(), registry.OutcomeAnswering))
	})
}

// TestProbeRetentionAndRollups runs 40 days of probes in fake time: the
// probes older than the history period go, the daily roll-ups stay for
// their own period and carry the 7- and 30-day uptime.
func TestProbeRetentionAndRollups(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		id := approvedAgent(t, svc, c, "https://a.example.com/agent.json")
		c.Advance(12 * time.Hour) // midnight: day d's probes are at 00, 06, 12 and 18 h
		// Four probes a day for 40 days; on days 0–19 one of the four is
		// unreachable (75 %), on days 20–39 all answer.
		for d := range 40 {
			for i := range 4 {
				o := registry.OutcomeAnswering
				if d < 20 && i == 0 {
					o = registry.OutcomeUnreachable
				}
				probeOnce(t, svc, c, round(id, c.Now(), o))
				c.Advance(6 * time.Hour)
			}
		}
		c.Advance(-6 * time.Hour) // the last probe's time
		pruned, err := svc.PruneProbes(t.Context(), c.Now(), 7*24*time.Hour, 90*24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		// Kept: the probes of the last 7 days, both ends included (29).
		if pruned != 160-29 {
			t.Fatalf("pruned %d probes, want %d", pruned, 160-29)
		}
		all, _, err := svc.Probes(t.Context(), admin, id, 500, "")
		if err != nil || len(all) != 29 {
			t.Fatalf("kept %d probes (%v), want 29", len(all), err)
		}
		a, err := svc.Get(t.Context(), anonymous, id)
		if err != nil {
			t.Fatal(err)
		}
		u := a.Liveness.Uptime
		// 30 days: days 10–39 → 10 days at 75 % and 20 at 100 %.
		if *u.H24 != 1 || *u.D7 != 1 || *u.D30 != 0.9166 || len(a.Liveness.Days) != 30 {
			t.Fatalf("uptime %v/%v/%v, %d days", *u.H24, *u.D7, *u.D30, len(a.Liveness.Days))
		}
		// Roll-ups older than their own period go too; a second prune
		// finds nothing.
		pruned, err = svc.PruneProbes(t.Context(), c.Now(), 7*24*time.Hour, 30*24*time.Hour)
		if err != nil || pruned != 9 {
			t.Fatalf("second prune: %d, %v (want days 0–8: day 9 ends inside the 30 days)", pruned, err)
		}
		if again, err := svc.PruneProbes(t.Context(), c.Now(), 7*24*time.Hour, 30*24*time.Hour); err != nil || again != 0 {
			t.Fatalf("third prune: %d, %v", again, err)
		}
	})
}

// TestClaimProbesExclusive: concurrent claimers (replicas) never get the
// same agent in one interval, and together they get every due agent once.
func TestClaimProbesExclusive(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		var ids []string
		for h := range 6 {
			for i := range 3 {
				ids = append(ids, approvedAgent(t, svc, c, fmt.Sprintf("https://h%d.example.com/a%d.json", h, i)))
			}
		}
		var (
			mu    sync.Mutex
			count = map[string]int{}
			errs  []error
			wg    sync.WaitGroup
		)
		for w := range 6 {
			wg.Go(func() {
				owner := fmt.Sprintf("r%d", w)
				for range 30 {
					got, err := svc.ClaimProbes(t.Context(), owner, c.Now(), time.Minute, 2, 2)
					if err == nil && len(got) > 0 {
						var rounds []registry.ProbeRound
						for _, d := range got {
							rounds = append(rounds, round(d.ID, c.Now(), registry.OutcomeAnswering))
						}
						var rerrs []error
						rerrs, err = svc.RecordProbes(t.Context(), owner, rounds)
						for _, e := range rerrs {
							if e != nil {
								err = e
							}
						}
					}
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					}
					for _, d := range got {
						count[d.ID]++
					}
					mu.Unlock()
					if len(got) == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 || len(count) != len(ids) {
			t.Fatalf("errors %v, probed %d of %d", errs, len(count), len(ids))
		}
		for id, n := range count {
			if n != 1 {
				t.Errorf("agent %s probed %d times in one interval", id, n)
			}
		}
	})
}

// TestClaimProbesYieldsToCrawls: a probe claim counts the crawl leases of
// a host against the per-host cap (the crawler's politeness is shared).
func TestClaimProbesYieldsToCrawls(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		a := approvedAgent(t, svc, c, "https://busy.example.com/a.json")
		b := approvedAgent(t, svc, c, "https://busy.example.com/b.json")
		makeDue(c)
		// The crawler holds one agent of the host.
		crawled, err := svc.ClaimDue(t.Context(), "crawler", c.Now(), time.Minute, 1, 1)
		if err != nil || len(crawled) != 1 {
			t.Fatalf("crawl claim: %v %+v", err, crawled)
		}
		due, err := svc.ClaimProbes(t.Context(), "prober", c.Now(), time.Minute, 10, 1)
		if err != nil || len(due) != 0 {
			t.Fatalf("with the host at its cap: %v %+v", err, due)
		}
		due, err = svc.ClaimProbes(t.Context(), "prober", c.Now(), time.Minute, 10, 2)
		if err != nil || len(due) != 1 {
			t.Fatalf("cap 2, one crawl lease: %v %+v", err, due)
		}
		if err := svc.ReleaseLeases(t.Context(), "crawler"); err != nil {
			t.Fatal(err)
		}
		due, err = svc.ClaimProbes(t.Context(), "prober", c.Now(), time.Minute, 10, 2)
		if err != nil || len(due) != 1 || (due[0].ID != a && due[0].ID != b) {
			t.Fatalf("after the crawl: %v %+v", err, due)
		}
	})
}
