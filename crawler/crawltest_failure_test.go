package crawler_test

import (
	"bytes"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// wantNext asserts the agent's next fetch is exactly d after the clock (the
// tests draw jitter 0.5, which is none).
func wantNext(t *testing.T, st *stack, id string, d time.Duration) {
	t.Helper()
	a := st.get(t, id)
	if want := st.clk.Now().Add(d); a.NextFetchAt == nil || !a.NextFetchAt.Equal(want) {
		t.Errorf("nextFetchAt %v, want now+%v", a.NextFetchAt, d)
	}
}

// docs/threats.md C.28: an HTML page (or prose, or JSON that is not a card)
// served with 200 is recorded as a failed fetch of its class; the last good
// card is kept and still served.
func TestCrawlBadContentKeepsLastGoodCard(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		fleet := agentfleet.Start(t, agentfleet.Options{})
		html := fleet.Add(agentfleet.Agent{Behavior: agentfleet.HTMLPage})
		m := newMutableAgent(t)
		good := agentfleet.GenerateCard(7, m.Origin(), "1.0.0")
		m.card(good)
		st := newStack(t, store, stackOptions{})
		htmlID, id := st.submit(t, html.URL()), st.submit(t, m.URL())
		st.crawl(t, 2)
		if f := st.lastFetch(t, htmlID); f.ErrorClass != fetch.ClassNotJSON || f.HTTPStatus != 200 || f.Result != registry.ResultError {
			t.Errorf("fleet HTML page: %+v", f)
		}
		if a := st.get(t, htmlID); a.Card != nil || a.Health != registry.HealthFailing || a.LastError == nil || a.LastError.Class != fetch.ClassNotJSON {
			t.Errorf("fleet HTML page agent: card %v health %s error %+v", a.Card != nil, a.Health, a.LastError)
		}
		for _, c := range []struct {
			class string
			serve func()
		}{
			{fetch.ClassNotJSON, func() {
				m.set(func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					w.Write([]byte("<html><body>Oops</body></html>"))
				})
			}},
			{fetch.ClassNotJSON, func() { m.card([]byte("<!doctype html><p>served as JSON</p>")) }},
			{fetch.ClassNotJSON, func() { m.card([]byte(`{"name":"a","name":"b"}`)) }}, // C.29 duplicate key
			{fetch.ClassNotACard, func() { m.card([]byte(`{"hello":"world"}`)) }},
			{fetch.ClassNotACard, func() { m.card([]byte(`[1,2,3]`)) }},
			{fetch.ClassInvalidCard, func() { m.card([]byte(`{"name":"x","NAME":"y","skills":[]}`)) }}, // C.30 case-variant key
			// K.96: a card over the size limit (512 KiB after decompression,
			// docs/security.md) is refused at fetch; the card before it stays.
			{fetch.ClassTooLarge, func() { m.card(append(append([]byte(nil), good...), bytes.Repeat([]byte(" "), 512<<10)...)) }},
		} {
			c.serve()
			st.later(t, 25*time.Hour, 2)
			f := st.lastFetch(t, id)
			if f.ErrorClass != c.class || f.HTTPStatus != 200 || f.Message == "" {
				t.Errorf("want %s, got %+v", c.class, f)
			}
			a := st.get(t, id)
			if a.VersionSeq != 1 || a.Card == nil || a.Health != registry.HealthFailing {
				t.Errorf("%s: version %d card %v health %s: the last good card must stay", c.class, a.VersionSeq, a.Card != nil, a.Health)
			}
			raw, _, err := st.svc.Card(t.Context(), admin, id)
			if err != nil || string(raw) != string(good) {
				t.Errorf("%s: current card bytes changed (%v)", c.class, err)
			}
		}
		m.card(good)
		st.later(t, 25*time.Hour, 2)
		if a := st.get(t, id); a.Health != registry.HealthOK || a.LastError != nil || a.VersionSeq != 1 {
			t.Errorf("recovered: health %s error %+v version %d", a.Health, a.LastError, a.VersionSeq)
		}
	})
}

// docs/threats.md B.25, B.26: 404 three times → gone, never deleted; 429 and
// 503 Retry-After honoured; 5xx backs off exponentially; a 200 resets.
func TestCrawlStatusBackoffAndGone(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		m := newMutableAgent(t)
		m.card(agentfleet.GenerateCard(3, m.Origin(), "1.0.0"))
		st := newStack(t, store, stackOptions{})
		id := st.submit(t, m.URL())
		st.crawl(t, 1)
		wantNext(t, st, id, time.Hour)

		m.status(500)
		st.later(t, 2*time.Hour, 1)
		wantNext(t, st, id, 5*time.Minute)
		st.later(t, 5*time.Minute, 1)
		wantNext(t, st, id, 10*time.Minute)
		st.later(t, 10*time.Minute, 1)
		wantNext(t, st, id, 20*time.Minute)
		if a := st.get(t, id); a.Health != registry.HealthFailing || a.LastError.HTTPStatus != 500 || a.LastError.Class != fetch.ClassHTTPStatus {
			t.Errorf("after 3×500: health %s error %+v", a.Health, a.LastError)
		}

		m.status(429, "Retry-After", "7200")
		st.later(t, 20*time.Minute, 1)
		wantNext(t, st, id, 2*time.Hour)
		m.status(503, "Retry-After", st.clk.Now().Add(2*time.Hour+3*time.Hour).UTC().Format(http.TimeFormat))
		st.later(t, 2*time.Hour, 1)
		wantNext(t, st, id, 3*time.Hour)
		m.status(429, "Retry-After", "9999999")
		st.later(t, 3*time.Hour, 1)
		wantNext(t, st, id, 24*time.Hour)

		m.status(404)
		st.later(t, 24*time.Hour, 1)
		st.later(t, 24*time.Hour, 1)
		if a := st.get(t, id); a.Health != registry.HealthFailing {
			t.Errorf("after 2×404: health %s, want failing", a.Health)
		}
		m.status(410)
		st.later(t, 24*time.Hour, 1)
		a := st.get(t, id)
		if a.Health != registry.HealthGone || a.Card == nil || a.VersionSeq != 1 {
			t.Errorf("after 404, 404, 410: health %s card %v version %d; want gone with the card kept", a.Health, a.Card != nil, a.VersionSeq)
		}
		m.card(agentfleet.GenerateCard(3, m.Origin(), "1.0.0"))
		st.later(t, 24*time.Hour, 1)
		if a := st.get(t, id); a.Health != registry.HealthOK || a.VersionSeq != 1 {
			t.Errorf("back online: health %s version %d", a.Health, a.VersionSeq)
		}
		wantNext(t, st, id, time.Hour)
	})
}

// The production policy (no allowances) never sends a request to the
// loopback fleet and records blocked_address (docs/threats.md B.11).
func TestCrawlProductionPolicyNeverReachesLoopback(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 3, Signer: verifierSigner})
		hosts := fleet.Hosts()
		agents := []*agentfleet.AgentHandle{
			fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: hosts[0]}),
			fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed, Host: hosts[1]}),
		}
		prod := fetch.DefaultPolicy()
		st := newStack(t, store, stackOptions{policy: &prod})
		for _, a := range agents {
			st.submit(t, a.URL())
		}
		bare := st.submit(t, hosts[2].Origin())
		st.crawl(t, 3)
		for _, h := range fleet.Hosts() {
			if h.Requests() != 0 {
				t.Errorf("host %s received %d requests under the production policy", h.Origin(), h.Requests())
			}
		}
		f := st.lastFetch(t, bare)
		if f.ErrorClass != fetch.ClassBlockedAddress || f.HTTPStatus != 0 {
			t.Errorf("bare loopback host: %+v", f)
		}
		if a := st.get(t, bare); a.LastError == nil || a.LastError.Class != fetch.ClassBlockedAddress || a.Card != nil {
			t.Errorf("agent record: %+v", a.LastError)
		}
	})
}

// A 304 to a request that carried no validators (a hostile or broken
// server) is a recorded http_status error, not "unchanged": there is no
// stored card it could refer to.
func TestCrawlUnsolicited304IsAnError(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		m := newMutableAgent(t)
		m.status(http.StatusNotModified)
		st := newStack(t, store, stackOptions{})
		id := st.submit(t, m.URL())
		st.crawl(t, 1)
		f := st.lastFetch(t, id)
		if f.ErrorClass != fetch.ClassHTTPStatus || f.HTTPStatus != 304 || f.Result != registry.ResultError {
			t.Errorf("fetch %+v", f)
		}
		if a := st.get(t, id); a.Health != registry.HealthFailing || a.VersionSeq != 0 {
			t.Errorf("health %s version %d", a.Health, a.VersionSeq)
		}
	})
}

// docs/design.md "Crawl policy": an agent failing for the gone-after period
// (168 h) is gone even without 404s; its card is kept.
func TestCrawlFailingForGoneAfterIsGone(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		m := newMutableAgent(t)
		m.card(agentfleet.GenerateCard(4, m.Origin(), "1.0.0"))
		st := newStack(t, store, stackOptions{})
		id := st.submit(t, m.URL())
		st.crawl(t, 1)
		m.status(http.StatusBadGateway)
		st.later(t, 2*time.Hour, 1) // failing since now
		for day := 1; day <= 6; day++ {
			st.later(t, 24*time.Hour, 1)
			if a := st.get(t, id); a.Health != registry.HealthFailing {
				t.Fatalf("day %d: health %s, want failing", day, a.Health)
			}
		}
		st.later(t, 24*time.Hour, 1)
		if a := st.get(t, id); a.Health != registry.HealthGone || a.Card == nil || a.VersionSeq != 1 {
			t.Errorf("after 7 days of 502: health %s card %v version %d", a.Health, a.Card != nil, a.VersionSeq)
		}
	})
}

// docs/threats.md B.25: a name that stops resolving is a dns failure that
// backs off; the last good card is never deleted.
func TestCrawlDNSFailureKeepsCard(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		m := newMutableAgent(t)
		// No kept-alive connection: each crawl resolves the name again.
		m.srv.Config.SetKeepAlivesEnabled(false)
		_, port, _ := strings.Cut(strings.TrimPrefix(m.Origin(), "http://"), ":")
		const name = "agent.cardex-dns.com"
		m.card(agentfleet.GenerateCard(6, "http://"+name+":"+port, "1.0.0"))
		r := newResolver()
		r.Set(name, addrs("127.0.0.1"))
		st := newStack(t, store, stackOptions{resolver: r})
		id := st.submit(t, "http://"+name+":"+port+"/.well-known/agent-card.json")
		st.crawl(t, 1)
		if a := st.get(t, id); a.VersionSeq != 1 || a.Health != registry.HealthOK {
			t.Fatalf("resolving: version %d health %s", a.VersionSeq, a.Health)
		}
		r.Fail(name, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true})
		st.later(t, 2*time.Hour, 1)
		wantNext(t, st, id, 5*time.Minute)
		st.later(t, 5*time.Minute, 1)
		wantNext(t, st, id, 10*time.Minute)
		a := st.get(t, id)
		if a.LastError == nil || a.LastError.Class != fetch.ClassDNS || a.Health != registry.HealthFailing || a.Card == nil || a.VersionSeq != 1 {
			t.Errorf("after 2 DNS failures: error %+v health %s card %v", a.LastError, a.Health, a.Card != nil)
		}
		if m.reqs.Load() != 1 {
			t.Errorf("agent asked %d times, want 1", m.reqs.Load())
		}
	})
}
