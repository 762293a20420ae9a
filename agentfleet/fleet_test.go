package agentfleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/strictjson"
)

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: body: %v", req.URL, err)
	}
	return resp, b
}

func newReq(t *testing.T, url string) *http.Request {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestGeneratedCardsAreRealisticV1(t *testing.T) {
	names := map[string]bool{}
	for n := range 200 {
		b := agentfleet.GenerateCard(n, "http://127.0.0.1:8080", "1.0.0")
		v, err := strictjson.Parse(b)
		if err != nil {
			t.Fatalf("card %d: %v", n, err)
		}
		for _, k := range []string{"name", "description", "supportedInterfaces", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
			if v.Get(k) == nil {
				t.Fatalf("card %d lacks %s", n, k)
			}
		}
		if u := v.Get("supportedInterfaces").Array[0].Get("url").String; !strings.HasPrefix(u, "http://127.0.0.1:8080/") {
			t.Errorf("card %d interface %s is not on its origin", n, u)
		}
		skills := v.Get("skills").Array
		if len(skills) == 0 || len(skills[0].Get("tags").Array) == 0 {
			t.Errorf("card %d has no tagged skill", n)
		}
		names[v.Get("name").String] = true
	}
	if len(names) < 100 {
		t.Errorf("only %d distinct names in 200 cards", len(names))
	}
	if !bytes.Equal(agentfleet.GenerateCard(7, "o", "1"), agentfleet.GenerateCard(7, "o", "1")) {
		t.Error("generation is not deterministic")
	}
	for name, b := range agentfleet.SampleCards() {
		if _, err := strictjson.Parse(b); err != nil {
			t.Errorf("sample %s: %v", name, err)
		}
	}
}

func TestHostsAndPaths(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 3, BaseAddr: "127.0.0.70"})
	var agents []*agentfleet.AgentHandle
	for range 6 {
		agents = append(agents, fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal}))
	}
	for i, a := range agents {
		u, _ := url.Parse(a.URL())
		want := netip.MustParseAddr(fmt.Sprintf("127.0.0.%d", 70+i%3))
		if netip.MustParseAddr(u.Hostname()) != want {
			t.Errorf("agent %d on %s, want %s", i, u.Hostname(), want)
		}
		wantPath := "/.well-known/agent-card.json"
		if i >= 3 {
			wantPath = fmt.Sprintf("/agents/%d/.well-known/agent-card.json", i)
		}
		if u.Path != wantPath {
			t.Errorf("agent %d path %s, want %s", i, u.Path, wantPath)
		}
		resp, body := do(t, http.DefaultClient, newReq(t, a.URL()))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || !bytes.Equal(body, a.Card()) || a.Requests() != 1 {
			t.Errorf("agent %d: %d %s, %d requests", i, resp.StatusCode, resp.Header.Get("Content-Type"), a.Requests())
		}
	}
	resp, _ := do(t, http.DefaultClient, newReq(t, fleet.Hosts()[0].Origin()+"/nothing"))
	if resp.StatusCode != 404 || fleet.Hosts()[0].Requests() != 3 {
		t.Errorf("unknown path: %d; host requests %d", resp.StatusCode, fleet.Hosts()[0].Requests())
	}
	if _, err := fleet.TryAdd(agentfleet.Agent{Behavior: agentfleet.Normal, Host: fleet.Hosts()[0], Path: "/.well-known/agent-card.json"}); err == nil {
		t.Error("a taken path was accepted")
	}
}

func TestConditionalAgent(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Conditional})
	resp, _ := do(t, http.DefaultClient, newReq(t, a.URL()))
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if !strings.HasPrefix(etag, `W/"`) || lm == "" || resp.Header.Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("validators: %v", resp.Header)
	}
	for h, v := range map[string]string{"If-None-Match": etag, "If-Modified-Since": lm} {
		req := newReq(t, a.URL())
		req.Header.Set(h, v)
		if resp, body := do(t, http.DefaultClient, req); resp.StatusCode != 304 || len(body) != 0 {
			t.Errorf("%s: %d with %d bytes", h, resp.StatusCode, len(body))
		}
	}
	req := newReq(t, a.URL())
	req.Header.Set("If-None-Match", `"other", W/"nope"`)
	if resp, _ := do(t, http.DefaultClient, req); resp.StatusCode != 200 {
		t.Errorf("non-matching ETag list: %d", resp.StatusCode)
	}
}

func TestChangingAgent(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Changing, ChangeEvery: 3, Card: []byte(`{"name":"c","version":"0.9"}`)})
	var versions []string
	for range 7 {
		_, body := do(t, http.DefaultClient, newReq(t, a.URL()))
		var c struct{ Version string }
		if err := json.Unmarshal(body, &c); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, c.Version)
	}
	want := "0.9 0.9 0.9 1.1.0 1.1.0 1.1.0 1.2.0"
	if got := strings.Join(versions, " "); got != want {
		t.Errorf("versions %s, want %s", got, want)
	}
}

func TestRedirectAgents(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	chain := fleet.Add(agentfleet.Agent{Behavior: agentfleet.RedirectChain, Hops: 2, RedirectStatus: 307})
	loop := fleet.Add(agentfleet.Agent{Behavior: agentfleet.RedirectLoop})
	gopher := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Redirect, Location: "gopher://10.0.0.1:70/x"})
	steps := []struct{ url, location string }{
		{chain.URL(), chainPath(chain, 1)}, {chain.URL() + "?hop=1", chainPath(chain, 2)},
		{loop.URL(), loopPath(loop) + "?loop=1"}, {loop.URL() + "?loop=1", loopPath(loop)},
		{gopher.URL(), "gopher://10.0.0.1:70/x"},
	}
	for _, s := range steps {
		resp, _ := do(t, noRedirects, newReq(t, s.url))
		if resp.Header.Get("Location") != s.location || resp.StatusCode/100 != 3 {
			t.Errorf("%s: %d Location %q, want %q", s.url, resp.StatusCode, resp.Header.Get("Location"), s.location)
		}
	}
	resp, body := do(t, noRedirects, newReq(t, chain.URL()+"?hop=2"))
	if resp.StatusCode != 200 || !bytes.Equal(body, chain.Card()) || chain.Requests() != 3 {
		t.Errorf("chain end: %d, %d requests", resp.StatusCode, chain.Requests())
	}
}

func chainPath(a *agentfleet.AgentHandle, hop int) string {
	return fmt.Sprintf("%s?hop=%d", loopPath(a), hop)
}

func loopPath(a *agentfleet.AgentHandle) string {
	u, _ := url.Parse(a.URL())
	return u.Path
}

func TestErrorAgents(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	cases := []struct {
		agent       agentfleet.Agent
		status      int
		contentType string
	}{
		{agentfleet.Agent{Behavior: agentfleet.Status, Status: 429, RetryAfter: "30"}, 429, "application/json"},
		{agentfleet.Agent{Behavior: agentfleet.Status, Status: 410}, 410, "application/json"},
		{agentfleet.Agent{Behavior: agentfleet.NotJSON}, 200, "text/plain; charset=utf-8"},
		{agentfleet.Agent{Behavior: agentfleet.HTMLPage}, 200, "text/html; charset=utf-8"},
	}
	for _, c := range cases {
		a := fleet.Add(c.agent)
		resp, body := do(t, http.DefaultClient, newReq(t, a.URL()))
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != c.contentType || len(body) == 0 {
			t.Errorf("%s: %d %q", c.agent.Behavior, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if resp.Header.Get("Retry-After") != c.agent.RetryAfter {
			t.Errorf("%s: Retry-After %q", c.agent.Behavior, resp.Header.Get("Retry-After"))
		}
	}
	if _, err := fleet.TryAdd(agentfleet.Agent{Behavior: "teapot"}); err == nil {
		t.Error("unknown behaviour accepted")
	}
}

// Peak concurrency is what politeness tests assert on.
func TestMaxInFlight(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.HangAfterHeaders})
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.URL(), nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body) // blocks until cancel
				resp.Body.Close()
			}
		})
	}
	for deadline := time.Now().Add(10 * time.Second); a.InFlight() < 3 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	for deadline := time.Now().Add(10 * time.Second); a.InFlight() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if a.MaxInFlight() != 3 || a.Requests() != 3 || a.InFlight() != 0 {
		t.Errorf("max in flight %d, requests %d, in flight %d", a.MaxInFlight(), a.Requests(), a.InFlight())
	}
}
