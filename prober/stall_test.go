package prober_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/prober"
)

// docs/threats.md K.98: two approved cards with 120 interfaces that each
// answer after 4 s do not starve a bystander's probes. The bystander's
// probes in 100 s of fake time with the tarpits running (from 20 minutes
// after they arrived: each expired lease used to add two stuck workers)
// stay within 20 %
// of its probes in 100 s alone; no round outlives its lease and no agent
// is claimed again under a running round.
func TestTarpitDoesNotStarveBystander(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		by := n.serve(t, "127.0.0.9:80", 0, "bystander.example")
		tarpit := n.serve(t, "127.0.0.5:80", 4*time.Second, "tarpit1.example", "tarpit2.example")
		m := newMemReg()
		m.add("bystander", "bystander.example", true, rpc("http://bystander.example/rpc"))
		p := syncProber(t, m, n, nil) // the defaults: 16 workers, 2 per host, 2 min leases, 5 s probes
		p.Start()
		start := time.Now()
		time.Sleep(100 * time.Second)
		alone := by.requests(start, time.Now())

		m.add("tarpit1", "tarpit1.example", true, rpcs(120, "http://tarpit1.example/i%d")...)
		m.add("tarpit2", "tarpit2.example", true, rpcs(120, "http://tarpit2.example/i%d")...)
		time.Sleep(20 * time.Minute)
		from := time.Now()
		time.Sleep(100 * time.Second)
		with := by.requests(from, time.Now())
		shutdown(t, p)

		t.Logf("bystander probes per 100 s: %d alone, %d beside the tarpits; tarpit requests %d, at most %d in flight",
			alone, with, tarpit.total(), tarpit.maxInFlight())
		if alone < 20 {
			t.Fatalf("baseline of %d probes per 100 s: the test proves nothing", alone)
		}
		if 5*with < 4*alone {
			t.Errorf("bystander: %d probes beside the tarpits, want at least 80 %% of %d", with, alone)
		}
		if m.late != 0 || m.reclaimed != 0 || m.lost != 0 {
			t.Errorf("%d rounds recorded after their lease, %d claimed again under a running round, %d lost", m.late, m.reclaimed, m.lost)
		}
		// Two names of one address: each its own host of one probe slot.
		if got := tarpit.maxInFlight(); got > 2 {
			t.Errorf("%d probes in flight at the tarpit, want at most 2", got)
		}
		for _, r := range m.rounds("tarpit1") {
			if len(r.Probes)+len(r.Unfinished) > prober.DefaultMaxInterfaces {
				t.Fatalf("a tarpit round planned %d interfaces, want at most %d", len(r.Probes)+len(r.Unfinished), prober.DefaultMaxInterfaces)
			}
		}
	})
}

// docs/threats.md K.98: a round ends inside its lease. Eight interfaces
// that never answer would take 40 s of 5 s timeouts; with a 20 s lease the
// round stops at half the lease (10 s): two probes, six left with their
// last verdict, recorded while the lease is held, never claimed twice.
func TestRoundEndsWithinLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		hang := n.serve(t, "127.0.0.6:80", time.Hour, "slow.example")
		m := newMemReg()
		m.add("slow", "slow.example", true, rpcs(8, "http://slow.example/i%d")...)
		p := syncProber(t, m, n, func(c *prober.Config) { c.LeaseTTL = 20 * time.Second; c.Interval = time.Hour })
		p.Start()
		time.Sleep(time.Minute)
		shutdown(t, p)
		rs := m.rounds("slow")
		if len(rs) != 1 || len(rs[0].Probes) != 2 || len(rs[0].Unfinished) != 6 {
			t.Fatalf("rounds %+v, want one of 2 probes and 6 unfinished", rs)
		}
		if m.late != 0 || m.reclaimed != 0 || m.lost != 0 {
			t.Errorf("%d rounds recorded after their lease, %d claimed again under a running round, %d lost", m.late, m.reclaimed, m.lost)
		}
		if got := hang.total(); got != 2 {
			t.Errorf("%d requests, want 2", got)
		}
	})
}

// docs/threats.md K.98: turning an agent's probing off stops its round in
// flight: the probe running then ends (within one probe timeout), no
// other starts, nothing is recorded.
func TestProbingOffStopsRoundInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		slow := n.serve(t, "127.0.0.6:80", 4*time.Second, "slow.example")
		m := newMemReg()
		m.add("slow", "slow.example", true, rpcs(8, "http://slow.example/i%d")...)
		p := syncProber(t, m, n, func(c *prober.Config) { c.Interval = time.Hour })
		p.Start()
		time.Sleep(6 * time.Second) // the second probe runs since 4 s
		m.disable("slow")
		off := time.Now()
		time.Sleep(5 * time.Second) // one probe timeout
		if got := slow.requests(off, time.Now().Add(time.Hour)); got != 0 {
			t.Fatalf("%d probes started after probing was turned off", got)
		}
		time.Sleep(time.Minute)
		shutdown(t, p)
		if got := slow.total(); got != 2 {
			t.Errorf("%d probes, want 2 (the one running when probing went off was the last)", got)
		}
		if rs := m.rounds("slow"); len(rs) != 0 {
			t.Errorf("recorded %d rounds of an agent whose probing is off", len(rs))
		}
	})
}

// docs/threats.md K.98, K.99: per agent and round, at most
// DefaultMaxInterfaces interfaces; off the card's registrable domain none
// unless a curator approved the agent, then at most DefaultMaxOffDomain.
// A 500-interface card naming a third party's webhook gets 0, then 2
// requests to it, not 1,032.
func TestProbeCapsPerAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		own := n.serve(t, "127.0.0.8:80", 0, "big.example", "api.big.example")
		victim := n.serve(t, "127.0.0.7:80", 0, "victim.example")
		m := newMemReg()
		m.add("big", "big.example", false, rpcs(500, "http://api.big.example/i%d")...)
		webhook := rpcs(500, "http://victim.example/hooks/catch/%d/deploy-production?confirm=yes")
		m.add("auto", "hook.example", false, webhook...)
		m.add("curated", "www.big.example", true, append(rpcs(3, "http://api.big.example/h%d"), webhook...)...)
		p := syncProber(t, m, n, func(c *prober.Config) { c.Interval = time.Hour })
		p.Start()
		time.Sleep(time.Minute)
		shutdown(t, p)
		want := map[string][2]int{"big": {8, 0}, "auto": {0, 0}, "curated": {3, 2}} // own-domain and off-domain probes
		for id, w := range want {
			rs := m.rounds(id)
			if len(rs) != 1 || len(rs[0].Probes) != w[0]+w[1] || len(rs[0].Unfinished) != 0 {
				t.Errorf("%s: rounds %+v, want one of %d probes", id, rs, w[0]+w[1])
			}
		}
		if got := victim.total(); got != 2 {
			t.Errorf("the off-domain host got %d requests, want 2 (curated agent only)", got)
		}
		if got := own.total(); got != 8+3 {
			t.Errorf("the own-domain host got %d requests, want 11", got)
		}
	})
}

// docs/threats.md K.99, K.100: probes to one host share its budget,
// whichever agent named it and however it was spelled, and leave the
// crawler room: three agents naming one slow address in three spellings
// never have more than one probe in flight there (half of
// --crawl-per-host 2), and a crawl of that host gets a slot at once.
func TestProbesShareHostBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet()
		victim := n.serve(t, "127.0.0.7:80", 4*time.Second)
		m := newMemReg()
		for i, spelling := range []string{"127.0.0.7", "[::ffff:127.0.0.7]", "[::ffff:7f00:7]"} {
			id := string(rune('a' + i))
			m.add(id, id+".example", true, rpcs(2, "http://"+spelling+"/p%d")...)
		}
		hosts := fetch.NewHostSlots(2)
		p := syncProber(t, m, n, func(c *prober.Config) { c.Hosts = hosts; c.Interval = time.Hour })
		p.Start()
		time.Sleep(time.Second)
		begin := time.Now()
		release, err := hosts.Acquire(t.Context(), "127.0.0.7", fetch.UseCrawl)
		if err != nil || time.Since(begin) != 0 {
			t.Fatalf("a crawl of the probed host waited %v (%v)", time.Since(begin), err)
		}
		release()
		time.Sleep(time.Minute)
		shutdown(t, p)
		if got := victim.maxInFlight(); got != 1 {
			t.Errorf("%d probes in flight at one host, want 1", got)
		}
		if got := victim.total(); got != 6 {
			t.Errorf("%d probes, want 6 (every interface once)", got)
		}
	})
}
