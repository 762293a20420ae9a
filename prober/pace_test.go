package prober_test

import (
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cardexhq/cardex/prober"
)

// addFleet adds n agents, each its own card host, whose one interface is
// on the endpoint fleet.example.
func addFleet(m *memReg, prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%d", prefix, i)
		m.add(ids[i], ids[i]+".example", true, rpc("http://fleet.example/"+ids[i]))
	}
	return ids
}

// firstRounds are the start times of each agent's first recorded round;
// an agent not probed is missing.
func firstRounds(m *memReg, ids []string) []time.Time {
	var out []time.Time
	for _, id := range ids {
		if rs := m.rounds(id); len(rs) > 0 {
			out = append(out, rs[0].At)
		}
	}
	return out
}

// busiestSecond is the most of starts in any one second [s, s+1 s) that
// begins at a start.
func busiestSecond(starts []time.Time) int {
	most := 0
	for _, s := range starts {
		n := 0
		for _, u := range starts {
			if !u.Before(s) && u.Before(s.Add(time.Second)) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// TestPaceSpreadsFirstRound (docs/liveness.md "Pacing"): 1,000 agents
// approved at once with a 100 s interval are not probed as fast as the
// workers go but at 1000 / (0.8 × 100 s) = 12.5 a second: at most
// ceil(12.5) and one second's burst of rounds start in any second, and the
// first round of all of them ends 80 s after the start, give or take the
// burst.
func TestPaceSpreadsFirstRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		n.serve(t, "127.0.0.7:80", 0, "fleet.example")
		m := newMemReg()
		ids := addFleet(m, "a", 1000)
		p := syncProber(t, m, n, func(c *prober.Config) {
			c.Interval = 100 * time.Second
			c.Tick = 0 // the default: 10 s
			c.RateFloor = 1
		})
		start := time.Now()
		p.Start()
		time.Sleep(95 * time.Second) // the second round starts at 100 s
		shutdown(t, p)

		starts := firstRounds(m, ids)
		if len(starts) != len(ids) {
			t.Fatalf("%d of %d agents probed in 95 s", len(starts), len(ids))
		}
		rate := 1000 / (0.8 * 100.0)
		if got, most := busiestSecond(starts), int(math.Ceil(rate))+int(math.Ceil(rate)); got > most {
			t.Errorf("%d rounds started in one second, want at most %d", got, most)
		}
		last := start
		for _, s := range starts {
			if s.After(last) {
				last = s
			}
		}
		if took := last.Sub(start); took < 75*time.Second || took > 90*time.Second {
			t.Errorf("the first round of 1000 agents took %v, want 75–90 s", took)
		}
		if got := p.Pace().Rate; got != rate {
			t.Errorf("Pace().Rate = %v, want %v", got, rate)
		}
		// Counted at the start and a minute later, with about 1000 - 60 ×
		// 12.5 = 250 left to probe.
		if c := p.Pace().Counts; c.Probeable != 1000 || c.NeverProbed < 230 || c.NeverProbed > 265 || c.Due != c.NeverProbed {
			t.Errorf("Pace().Counts = %+v, want 1000 probeable, about 250 never probed and due", c)
		}
		t.Logf("first round of 1000 agents: %v, at most %d started in one second", last.Sub(start), busiestSecond(starts))
		if m.late != 0 || m.reclaimed != 0 || m.lost != 0 {
			t.Errorf("%d rounds recorded after their lease, %d claimed again under a running round, %d lost", m.late, m.reclaimed, m.lost)
		}
	})
}

// TestPaceSmallCatalogueAtOnce: a small catalogue is probed at the floor's
// pace, 20 a second, so 30 agents are all probed within 2 s (the pacer
// kicks the prober when its tokens are back instead of leaving it idle
// until the 10 s tick), and a lone agent approved later in the idle
// registry is probed within 2 s of the kick an approval gives.
func TestPaceSmallCatalogueAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		n.serve(t, "127.0.0.7:80", 0, "fleet.example")
		m := newMemReg()
		ids := addFleet(m, "s", 30)
		p := syncProber(t, m, n, func(c *prober.Config) {
			c.Interval = 15 * time.Minute
			c.Tick = 0 // the default: 10 s
		})
		start := time.Now()
		p.Start()
		time.Sleep(2 * time.Second)
		if got := len(firstRounds(m, ids)); got != len(ids) {
			t.Fatalf("%d of %d agents probed within 2 s", got, len(ids))
		}
		if got := busiestSecond(firstRounds(m, ids)); got > 2*prober.DefaultRateFloor {
			t.Errorf("%d rounds started in one second, want at most %d", got, 2*prober.DefaultRateFloor)
		}

		time.Sleep(5 * time.Second)
		m.add("late", "late.example", true, rpc("http://fleet.example/late"))
		p.Kick()
		added := time.Now()
		time.Sleep(2 * time.Second)
		rs := m.rounds("late")
		shutdown(t, p)
		if len(rs) != 1 || rs[0].At.Sub(added) > 2*time.Second {
			t.Fatalf("the late agent: %d rounds in 2 s (%v)", len(rs), rs)
		}
		t.Logf("30 agents in %v; the late one %v after its kick", firstRounds(m, ids)[29].Sub(start), rs[0].At.Sub(added))
	})
}

// TestPaceFollowsCatalogueGrowth: the pace comes from a count of the
// agents made at most once a minute. 8 agents pace at the floor (1 a
// second here); 1,000 more approved a second later are probed at that
// pace until the next count, a minute after the first, raises it to
// 1008 / 80 s = 12.6 a second.
func TestPaceFollowsCatalogueGrowth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		n.serve(t, "127.0.0.7:80", 0, "fleet.example")
		m := newMemReg()
		addFleet(m, "g", 8)
		p := syncProber(t, m, n, func(c *prober.Config) {
			c.Interval = 100 * time.Second
			c.Tick = 0
			c.RateFloor = 1
		})
		start := time.Now()
		p.Start()
		time.Sleep(time.Second)
		ids := addFleet(m, "h", 1000)
		p.Kick()
		time.Sleep(30 * time.Second)
		if got := p.Pace().Rate; got != 1 {
			t.Errorf("Pace().Rate before the second count = %v, want the floor 1", got)
		}
		time.Sleep(40 * time.Second) // 71 s after the start
		if got, want := p.Pace().Rate, 1008/80.0; got != want {
			t.Errorf("Pace().Rate after the second count = %v, want %v", got, want)
		}
		time.Sleep(5 * time.Second)
		shutdown(t, p)

		per := func(from, to time.Duration) int {
			k := 0
			for _, s := range firstRounds(m, ids) {
				if !s.Before(start.Add(from)) && s.Before(start.Add(to)) {
					k++
				}
			}
			return k
		}
		if got := per(10*time.Second, 50*time.Second); got < 38 || got > 42 {
			t.Errorf("%d rounds of the new agents between 10 s and 50 s, want 40 (1 a second)", got)
		}
		if got := per(70*time.Second, 75*time.Second); got < 60 || got > 66 {
			t.Errorf("%d rounds of the new agents between 70 s and 75 s, want 63 (12.6 a second)", got)
		}
		m.mu.Lock()
		counted := m.counted
		m.mu.Unlock()
		if counted != 2 {
			t.Errorf("%d counts in 76 s, want 2 (one a minute)", counted)
		}
	})
}
