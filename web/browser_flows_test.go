package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// The publish flow against a loopback agent served by agentfleet and
// fetched by the real crawler: submit, watch the status page wait, let the
// scheduler fetch, and see the page update itself with the result.
func TestBrowserPublishFlow(t *testing.T) {
	e := newEnv(t)
	fleet := agentfleet.Start(t, agentfleet.Options{})
	agent := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Card: readCard(t, "hotel.json")})
	pol := fetch.DefaultPolicy()
	pol.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	pol.AllowInsecureHTTP = true
	f, err := fetch.New(fetch.Config{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	sched, err := crawler.NewScheduler(crawler.SchedulerConfig{Registry: e.svc, Fetcher: f, Now: e.clk.Now,
		Rand: func() float64 { return 0.5 }, Tick: time.Hour, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	sched.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sched.Shutdown(ctx)
	})
	// The UI's kick is held back until the test has seen the waiting page.
	kicked := make(chan struct{}, 1)
	e.onKick = func() {
		select {
		case kicked <- struct{}{}:
		default:
		}
	}

	ctx := tab(t)
	var state string
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/publish"),
		chromedp.SendKeys("#cardUrl", agent.URL(), chromedp.ByID),
		chromedp.Submit("#cardUrl", chromedp.ByID),
		chromedp.WaitVisible("#publish-status", chromedp.ByID),
		chromedp.Text("dd.fetch-state", &state, chromedp.ByQuery),
		chromedp.Evaluate(`window.__noReload = true`, nil),
	)
	if state != "waiting for the crawler…" {
		t.Fatalf("fetch state %q before the crawl", state)
	}
	select {
	case <-kicked:
	default:
		t.Fatal("submitting did not ask the crawler to fetch")
	}
	sched.Kick()
	var problems int
	var status string
	run(t, ctx,
		chromedp.Poll(`document.querySelector("dd.fetch-state").textContent.startsWith("done") && window.__noReload === true`,
			nil, chromedp.WithPollingTimeout(15*time.Second)),
		chromedp.Evaluate(`document.querySelectorAll("#publish-status li.problem").length`, &problems),
		chromedp.Text("#publish-status .status-pending", &status, chromedp.ByQuery),
	)
	if status != "status: pending" {
		t.Errorf("status %q after the first fetch", status)
	}
	// The hotel card names interfaces on another host and lacks v1 fields.
	if problems == 0 {
		t.Error("the first fetch's problems are not shown")
	}
	if n := agent.Requests(); n < 1 {
		t.Errorf("the loopback agent served %d requests", n)
	}
	var refreshing bool
	run(t, ctx, chromedp.Evaluate(`document.querySelector("[data-refresh]") !== null`, &refreshing))
	if refreshing {
		t.Error("the page keeps refreshing after the first fetch")
	}
}

// Admin: sign in, open a pending agent from the queue, approve it with a
// reason; the agent is approved and the audit log has the reason.
func TestBrowserAdminLoginApprove(t *testing.T) {
	e := newEnv(t)
	geo := e.submit("geo.example.com")
	e.record(geo.ID, fetched{raw: readCard(t, "geospatial.json"), trust: registry.TrustVerified, thumbs: []string{"tp"},
		signatures: []registry.SignatureResult{{Kid: "key-1", Alg: "ES256", KeySource: "well-known", Profile: "spec", Status: "verified", Thumbprint: "tp"}}})
	other := e.submit("toolroute.example.com")
	e.record(other.ID, fetched{raw: readCard(t, "toolroute.json")})
	flaggedAgent(e, "hotel.example.com")
	failing := e.listed("currency.example.com", "currency.json")
	e.recordError(failing, "timeout", 0, "no answer within 10s")
	tok := e.adminToken()

	ctx := tab(t)
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/admin"),
		chromedp.SendKeys("#token", tok, chromedp.ByID),
		chromedp.Click(`form[action="/admin/login"] button`, chromedp.ByQuery),
		chromedp.WaitVisible("#pending", chromedp.ByID),
	)
	screenshot(t, ctx, "admin-queue.png")
	var done, loc string
	run(t, ctx,
		chromedp.Click(`#pending tr[data-agent-id="`+geo.ID+`"] a`, chromedp.ByQuery),
		chromedp.WaitVisible("#decide", chromedp.ByID),
		chromedp.SendKeys("#reason-approve", "signed, docs check out", chromedp.ByID),
		chromedp.Click(`form.action-approve button`, chromedp.ByQuery),
		chromedp.WaitVisible("#done", chromedp.ByID),
		chromedp.Text("#done", &done, chromedp.ByID),
		chromedp.Location(&loc),
	)
	if done != "Approved." || !strings.HasSuffix(loc, "/admin/agents/"+geo.ID+"?done=approve") {
		t.Errorf("after approve: %q at %q", done, loc)
	}
	a, err := e.svc.Get(t.Context(), adminP, geo.ID)
	if err != nil || a.Status != registry.StatusApproved {
		t.Fatalf("agent status %v, %v", a.Status, err)
	}
	es, _, _ := e.svc.Audit(t.Context(), adminP, 0, 100)
	last := es[len(es)-1]
	if last.Action != "approve" || last.Reason != "signed, docs check out" || last.AgentID != geo.ID {
		t.Errorf("last audit entry %+v", last)
	}
}

// docs/threats.md I.77 in a real browser: a page on another loopback
// origin auto-submits a form to the admin action URL of a signed-in admin.
// The UI refuses it with 403 and nothing changes.
func TestBrowserI77CrossOriginForm(t *testing.T) {
	e := newEnv(t)
	a := e.submit("target.example.com")
	e.record(a.ID, fetched{raw: readCard(t, "hotel.json")})
	tok := e.adminToken()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("a second loopback address: %v", err)
	}
	evil := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/admin/agents/%s/act">`+
			`<input name="action" value="approve"><input name="versionSeq" value="1"></form>`+
			`<script>document.forms[0].submit()</script>`, e.srv.URL, a.ID)
	}))
	evil.Listener.Close()
	evil.Listener = ln
	evil.Start()
	t.Cleanup(evil.Close)

	ctx := tab(t)
	var heading, loc string
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/admin"),
		chromedp.SendKeys("#token", tok, chromedp.ByID),
		chromedp.Submit("#token", chromedp.ByID),
		chromedp.WaitVisible("#pending", chromedp.ByID),
		chromedp.Navigate(evil.URL+"/"),
		chromedp.Poll(`location.origin === "`+e.srv.URL+`" && location.pathname === "/admin/agents/`+a.ID+`/act" && document.readyState === "complete"`, nil),
		chromedp.Text("h1", &heading, chromedp.ByQuery),
		chromedp.Location(&loc),
	)
	if heading != "Cross-origin request refused" {
		t.Errorf("cross-origin POST answered %q at %q", heading, loc)
	}
	got, err := e.svc.Get(t.Context(), adminP, a.ID)
	if err != nil || got.Status != registry.StatusPending {
		t.Fatalf("status %v after the cross-origin form, %v", got.Status, err)
	}
}
