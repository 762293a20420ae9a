package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// probeRound plays the prober for one agent: claim it and record one probe
// per outcome given.
func (h *harness) probeRound(agentID string, outcomes ...string) {
	h.t.Helper()
	ctx := h.ctx()
	now := h.svcClock.Now()
	due, err := h.svc.ClaimProbes(ctx, "api-prober", now, time.Minute, 100, 100)
	if err != nil {
		h.t.Fatal(err)
	}
	found := false
	for _, d := range due {
		found = found || d.ID == agentID
	}
	if !found {
		h.t.Fatalf("agent %s is not due for a probe", agentID)
	}
	r := registry.ProbeRound{AgentID: agentID, At: now, Next: now}
	for i, o := range outcomes {
		r.Probes = append(r.Probes, registry.ProbeResult{URL: fmt.Sprintf("https://agent.example.com/a2a/%d", i), Binding: "JSONRPC",
			ProtocolVersion: "1.0", Outcome: o, Latency: 20 * time.Millisecond, HTTPStatus: 200, RPCCode: -32001})
	}
	if errs, err := h.svc.RecordProbes(ctx, "api-prober", []registry.ProbeRound{r}); err != nil || errs[0] != nil {
		h.t.Fatalf("record probes: %v %v", err, errs)
	}
	if err := h.svc.ReleaseProbeLeases(ctx, "api-prober"); err != nil {
		h.t.Fatal(err)
	}
}

// TestLivenessAPI: the record's liveness object, the probe history pages,
// the admin off switch and the liveness change, each checked against
// openapi.yaml by the harness.
func TestLivenessAPI(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		reader := h.token(registry.RoleReader)
		a := h.submit("https://agent.example.com/.well-known/agent-card.json", "")
		h.fetch(a.ID, h.cardBytes(cardCurrency))
		path := "/api/v1/agents/" + a.ID
		h.do(req{method: "POST", path: path + "/approve", token: admin, body: jsonBody(`{"versionSeq":1}`)}).expectStatus(t, http.StatusOK)

		var rec registry.Agent
		h.do(req{method: "GET", path: path}).json(t, &rec)
		if rec.Liveness == nil || rec.Liveness.State != registry.LivenessUnknown || !rec.Liveness.Probing {
			t.Fatalf("before probes: %+v", rec.Liveness)
		}
		for range 3 {
			h.probeRound(a.ID, registry.OutcomeAnswering, registry.OutcomeUnreachable)
			h.svcClock.Advance(time.Minute)
		}
		h.do(req{method: "GET", path: path}).json(t, &rec)
		l := rec.Liveness
		if l.State != registry.LivenessDegraded || l.FailingSince == nil || len(l.Interfaces) != 2 || *l.Uptime.H24 != 0.5 ||
			*l.P50MS != 20 || len(l.Days) != 1 || l.Days[0].Probes != 6 {
			t.Fatalf("after probes: %+v", l)
		}
		// The list carries the state.
		page := listAll(t, h, "")
		if len(page.Agents) != 1 || page.Agents[0].Liveness.State != registry.LivenessDegraded || page.Agents[0].Liveness.Uptime != nil {
			t.Fatalf("list: %+v", page.Agents)
		}

		// History: 6 probes in pages of 4.
		var p1 struct {
			Probes        []registry.Probe `json:"probes"`
			NextPageToken string           `json:"nextPageToken"`
		}
		h.do(req{method: "GET", path: path + "/probes?limit=4"}).json(t, &p1)
		if len(p1.Probes) != 4 || p1.NextPageToken == "" {
			t.Fatalf("page 1: %+v", p1)
		}
		var p2 struct {
			Probes        []registry.Probe `json:"probes"`
			NextPageToken string           `json:"nextPageToken"`
		}
		h.do(req{method: "GET", path: path + "/probes?limit=4&pageToken=" + url.QueryEscape(p1.NextPageToken)}).json(t, &p2)
		if len(p2.Probes) != 2 || p2.NextPageToken != "" || p2.Probes[0].ID >= p1.Probes[3].ID {
			t.Fatalf("page 2: %+v", p2)
		}
		h.do(req{method: "GET", path: path + "/probes?pageToken=bogus"}).expectProblem(t, http.StatusBadRequest, "validation-failed")
		h.do(req{method: "GET", path: path + "/probes?limit=0"}).expectStatus(t, http.StatusBadRequest)
		h.do(req{method: "GET", path: path + "/probes?limit=501"}).expectStatus(t, http.StatusOK) // clamped to 500
		h.do(req{method: "GET", path: path + "/probes?since=1"}).expectStatus(t, http.StatusBadRequest)
		h.do(req{method: "GET", path: "/api/v1/agents/AAAAAAAAAAAAAAAAAAAAAA/probes"}).expectProblem(t, http.StatusNotFound, "not-found")

		// The off switch: admins only, a boolean only.
		h.do(req{method: "PUT", path: path + "/probing", token: reader, body: jsonBody(`{"enabled":false}`)}).expectStatus(t, http.StatusForbidden)
		h.do(req{method: "PUT", path: path + "/probing", body: jsonBody(`{"enabled":false}`)}).expectStatus(t, http.StatusUnauthorized)
		for _, bad := range []string{`{}`, `{"enabled":"no"}`, `{"enabled":false,"x":1}`, `[]`} {
			h.do(req{method: "PUT", path: path + "/probing", token: admin, body: jsonBody(bad)}).expectStatus(t, http.StatusBadRequest)
		}
		h.do(req{method: "GET", path: path}).json(t, &rec)
		if !rec.Liveness.Probing {
			t.Fatal("a refused request changed probing")
		}
		var off registry.Agent
		h.do(req{method: "PUT", path: path + "/probing", token: admin, body: jsonBody(`{"enabled":false}`)}).json(t, &off)
		if off.Liveness.Probing || off.Liveness.State != registry.LivenessUnknown {
			t.Fatalf("off: %+v", off.Liveness)
		}
		if due, _ := h.svc.ClaimProbes(h.ctx(), "x", h.svcClock.Now().Add(time.Hour), time.Minute, 10, 10); len(due) != 0 {
			t.Fatalf("claimed with probing off: %+v", due)
		}
		h.do(req{method: "PUT", path: path + "/probing", token: admin, body: jsonBody(`{"enabled":true}`)}).expectStatus(t, http.StatusOK)

		// The change log names the transitions for anonymous followers.
		var feed struct {
			Changes []registry.Change `json:"changes"`
		}
		h.do(req{method: "GET", path: "/api/v1/changes"}).json(t, &feed)
		n := 0
		for _, c := range feed.Changes {
			if c.Kind == registry.ChangeLiveness {
				n++
			}
		}
		if n != 2 {
			t.Fatalf("%d liveness changes in the feed, want 2 (degraded, then unknown): %+v", n, feed.Changes)
		}
	})
}

// TestLiveFilterAndFacet: live= filters the list through the index, repeated
// values OR; the liveness facet counts the matching agents; a bad value is
// 400; a liveness change reaches the index through the change log.
func TestLiveFilterAndFacet(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newSearchHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		card := testCard{name: "Agent", description: "Answers things.", skills: []skill{{"s", "Skill", "Does it.", []string{"t"}}}}
		up := h.publish("up.example.com", card, admin, true)
		down := h.publish("down.example.com", card, admin, true)
		never := h.publish("never.example.com", card, admin, true)
		h.probeRound(up.ID, registry.OutcomeAnswering)
		h.probeRound(down.ID, registry.OutcomeUnreachable)
		h.sync()

		if got := h.list("live=answering", "").ids(); !slices.Equal(got, []string{up.ID}) {
			t.Errorf("live=answering: %v", got)
		}
		if got := h.list("live=unreachable&live=unknown", "").ids(); !slices.Equal(sortedStrings(got), sortedIDs(down, never)) {
			t.Errorf("live=unreachable|unknown: %v", got)
		}
		p := h.list("q=agent", "")
		want := []search.FacetValue{{Value: "answering", Count: 1}, {Value: "unknown", Count: 1}, {Value: "unreachable", Count: 1}}
		if p.Facets == nil || !slices.Equal(p.Facets.Liveness, want) {
			t.Errorf("liveness facet %+v", p.Facets)
		}
		for _, a := range p.Agents {
			if a.Liveness == nil || (a.ID == up.ID && a.Liveness.State != registry.LivenessAnswering) {
				t.Errorf("search result %s liveness %+v", a.ID, a.Liveness)
			}
		}
		h.do(req{method: "GET", path: "/api/v1/agents?live=alive"}).expectStatus(t, http.StatusBadRequest)

		// The unreachable agent recovers: after the index follows the
		// change log it lists as answering.
		h.probeRound(down.ID, registry.OutcomeAnswering)
		h.sync()
		if got := h.list("live=answering", "").ids(); !slices.Equal(sortedStrings(got), sortedIDs(up, down)) {
			t.Errorf("after recovery: %v", got)
		}
	})
}

func sortedStrings(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
