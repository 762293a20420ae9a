package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
)

// probe plays the prober: claim the agent and record one probe per
// outcome at the env's clock.
func (e *env) probe(id string, outcomes ...string) {
	e.t.Helper()
	ctx := context.Background()
	now := e.clk.Now()
	due, err := e.svc.ClaimProbes(ctx, "web-test", now, time.Minute, 100, 100)
	if err != nil {
		e.t.Fatal(err)
	}
	found := false
	for _, d := range due {
		found = found || d.ID == id
	}
	if !found {
		e.t.Fatalf("agent %s not due for a probe", id)
	}
	r := registry.ProbeRound{AgentID: id, At: now, Next: now}
	for i, o := range outcomes {
		r.Probes = append(r.Probes, registry.ProbeResult{URL: "https://geo.example.com/a2a/" + string(rune('a'+i)), Binding: "JSONRPC",
			ProtocolVersion: "1.0", Outcome: o, Latency: 42 * time.Millisecond, HTTPStatus: 200, RPCCode: -32001})
	}
	if errs, err := e.svc.RecordProbes(ctx, "web-test", []registry.ProbeRound{r}); err != nil || errs[0] != nil {
		e.t.Fatalf("record: %v %v", err, errs)
	}
	if err := e.svc.ReleaseProbeLeases(ctx, "web-test"); err != nil {
		e.t.Fatal(err)
	}
}

// TestAgentPageLiveness: the agent page shows the liveness badge, uptime,
// each interface's outcome and a 30-day strip drawn as inline SVG (one
// rect per day, coloured by what the probes saw); the catalogue shows the
// badge on each result.
func TestAgentPageLiveness(t *testing.T) {
	e := newEnv(t)
	id := e.listed("geo.example.com", "geospatial.json")

	d := parse(t, e.get("/agents/"+id))
	if got := d.text("#liveness-h"); got != "Liveness A2A: unknown" {
		t.Errorf("before probes: heading %q", got)
	}
	if got := len(d.all("#liveness rect")); got != 30 {
		t.Fatalf("%d strip cells before probes, want 30", got)
	}
	if got := len(d.all("#liveness rect.strip-none")); got != 30 {
		t.Errorf("%d empty cells before probes, want 30", got)
	}

	// Three days: all answer, then one of two fails, then none answers.
	e.clk.Advance(-48 * time.Hour)
	e.probe(id, registry.OutcomeAnswering, registry.OutcomeAnswering)
	e.clk.Advance(24 * time.Hour)
	e.probe(id, registry.OutcomeAnswering, registry.OutcomeUnreachable)
	e.clk.Advance(24 * time.Hour)
	e.probe(id, registry.OutcomeUnreachable, registry.OutcomeUnreachable)

	d = parse(t, e.get("/agents/"+id))
	if got := d.text("#liveness-h"); got != "Liveness A2A: unreachable" {
		t.Errorf("heading %q", got)
	}
	cells := d.all("#liveness svg rect")
	if len(cells) != 30 {
		t.Fatalf("%d strip cells, want 30", len(cells))
	}
	var classes []string
	for _, c := range cells[27:] {
		cl, _ := attr(c, "class")
		classes = append(classes, cl)
	}
	if strings.Join(classes, " ") != "strip-up strip-partial strip-down" {
		t.Errorf("last three days %v", classes)
	}
	if got := d.text("#liveness svg rect.strip-partial title"); got != "2026-02-28: 1 of 2 probes answered (50.0 %)" {
		t.Errorf("tooltip %q", got)
	}
	if got := d.text("dd.uptime"); got != "24 h 0.0 % · 7 days 50.0 % · 30 days 50.0 %" {
		t.Errorf("uptime %q", got)
	}
	rows := d.all("table.live-interfaces tr.iface")
	if len(rows) != 2 || !strings.Contains(texts(rows)[0], "unreachable") || !strings.Contains(texts(rows)[0], "HTTP 200 code -32001") {
		t.Errorf("interface rows %q", texts(rows))
	}
	if len(d.all("script")) > 0 {
		for _, s := range d.all("script") {
			if src, _ := attr(s, "src"); src == "" {
				t.Error("the agent page has an inline script")
			}
		}
	}
	// The catalogue shows the state on the result; the legend explains it.
	e.sync()
	c := parse(t, e.get("/"))
	if got := c.text("li.result a.live-unreachable"); got != "A2A: unreachable" {
		t.Errorf("catalogue badge %q", got)
	}
	l := parse(t, e.get("/legend"))
	if got := l.text("#liveness-degraded"); got != "A2A: degraded" {
		t.Errorf("legend %q", got)
	}
}

// TestCatalogueLiveFacet: the catalogue's sidebar offers the liveness facet
// with counts, and following a value filters the results (links only, no
// script).
func TestCatalogueLiveFacet(t *testing.T) {
	e := newEnv(t)
	up := e.listed("geo.example.com", "geospatial.json")
	e.listed("other.example.com", "geospatial.json")
	e.probe(up, registry.OutcomeAnswering)
	e.sync()
	d := parse(t, e.get("/"))
	var link string
	for _, a := range d.all("a") {
		if href, _ := attr(a, "href"); strings.Contains(href, "live=answering") {
			link = href
		}
	}
	if link == "" {
		t.Fatal("no live=answering facet link")
	}
	d = parse(t, e.get(link))
	ids := []string{}
	for _, li := range d.all("li.result") {
		id, _ := attr(li, "data-agent-id")
		ids = append(ids, id)
	}
	if len(ids) != 1 || ids[0] != up {
		t.Fatalf("filtered results %v, want [%s]", ids, up)
	}
}

// TestAdminProbingSwitch: the review page's button stops and resumes the
// agent's liveness probes (audited), and anything but true/false is 400.
func TestAdminProbingSwitch(t *testing.T) {
	e := newEnv(t)
	id := e.listed("geo.example.com", "geospatial.json")
	tok := e.adminToken()
	d := parse(t, e.do("GET", "/admin/agents/"+id, nil, e.asAdmin(tok)))
	if got := d.text(`form[action="/admin/agents/` + id + `/probing"] button`); got != "Stop liveness probes" {
		t.Fatalf("button %q", got)
	}
	wantStatus(t, e.do("POST", "/admin/agents/"+id+"/probing", url.Values{"enabled": {"maybe"}}, e.asAdmin(tok)), 400)
	wantStatus(t, e.do("POST", "/admin/agents/"+id+"/probing", url.Values{"enabled": {"false"}}, nil), 401) // not signed in
	wantStatus(t, e.do("POST", "/admin/agents/"+id+"/probing", url.Values{"enabled": {"false"}}, e.asAdmin(tok)), 303)
	a, _ := e.svc.Get(t.Context(), adminP, id)
	if a.Liveness.Probing {
		t.Fatal("probing still on")
	}
	d = parse(t, e.do("GET", "/admin/agents/"+id, nil, e.asAdmin(tok)))
	if got := d.text(`form[action="/admin/agents/` + id + `/probing"] button`); got != "Resume liveness probes" {
		t.Fatalf("button after stopping %q", got)
	}
	wantStatus(t, e.do("POST", "/admin/agents/"+id+"/probing", url.Values{"enabled": {"true"}}, e.asAdmin(tok)), 303)
	if a, _ := e.svc.Get(t.Context(), adminP, id); !a.Liveness.Probing {
		t.Fatal("probing still off")
	}
	es, _, _ := e.svc.Audit(t.Context(), adminP, 0, 100)
	n := 0
	for _, en := range es {
		if en.AgentID == id && en.Action == "set-probing" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d set-probing audit entries, want 2", n)
	}
}
