package registry_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/cardurl"
	"github.com/cardexhq/cardex/registry"
)

// clock is an injected, manually advanced clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var (
	admin     = registry.Principal{Role: registry.RoleAdmin, TokenID: "t-admin", Name: "root"}
	reader    = registry.Principal{Role: registry.RoleReader, TokenID: "t-reader", Name: "reader"}
	anonymous = registry.Anonymous
)

func publisher(hosts ...string) registry.Principal {
	return registry.Principal{Role: registry.RolePublisher, TokenID: "t-pub", Name: "pub", Hosts: hosts}
}

func newService(s *registry.Store, c *clock) *registry.Service {
	return registry.NewService(s, registry.ServiceConfig{Now: c.Now})
}

func mustSubmit(t *testing.T, svc *registry.Service, url string) *registry.Agent {
	t.Helper()
	a, err := svc.Submit(t.Context(), anonymous, url, "")
	if err != nil {
		t.Fatalf("Submit(%q): %v", url, err)
	}
	return a
}

// cardJSON is a small valid v1 card whose name and version vary.
func cardJSON(name, version string) []byte {
	return fmt.Appendf(nil, `{"name":%q,"description":"An agent for tests.","version":%q,`+
		`"supportedInterfaces":[{"url":"https://a.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],`+
		`"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],`+
		`"skills":[{"id":"s1","name":"Skill","description":"Does it.","tags":["demo"]}]}`, name, version)
}

// okResult is a successful fetch of raw with the given trust and the
// thumbprints that verified it.
func okResult(t *testing.T, at time.Time, raw []byte, trust registry.Trust, thumbs ...string) registry.FetchResult {
	t.Helper()
	p, err := agentcard.Parse(raw, agentcard.Options{})
	if err != nil {
		t.Fatalf("test card does not parse: %v", err)
	}
	return registry.FetchResult{
		Attempt: registry.FetchAttempt{At: at, URL: "https://a.example.com/.well-known/agent-card.json", HTTPStatus: 200, Duration: 12 * time.Millisecond, Bytes: int64(len(raw))},
		ETag:    `"e1"`, Raw: raw, Card: p.Card, Problems: p.Problems, ProtocolVersion: "1.0",
		Trust: trust, Thumbprints: thumbs, NextFetchAt: at.Add(time.Hour),
	}
}

func errResult(at time.Time, class string, status int) registry.FetchResult {
	return registry.FetchResult{
		Attempt:     registry.FetchAttempt{At: at, URL: "https://a.example.com/.well-known/agent-card.json", HTTPStatus: status, ErrorClass: class, Message: "fetch failed"},
		NextFetchAt: at.Add(time.Hour),
	}
}

// crawl claims the agent (it must be due) and records res for it.
func crawl(t *testing.T, svc *registry.Service, c *clock, id string, res registry.FetchResult) {
	t.Helper()
	claimed, err := svc.ClaimDue(t.Context(), "w1", c.Now(), time.Minute, 1000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range claimed {
		found = found || d.ID == id
	}
	if !found {
		t.Fatalf("agent %s was not due at %v", id, c.Now())
	}
	if err := svc.RecordFetch(t.Context(), "w1", id, res); err != nil {
		t.Fatalf("RecordFetch: %v", err)
	}
	// Give back the other agents' leases so later crawls find them due.
	if err := svc.ReleaseLeases(t.Context(), "w1"); err != nil {
		t.Fatal(err)
	}
}

// makeDue advances the clock past the agent's next fetch.
func makeDue(c *clock) { c.Advance(2 * time.Hour) }

func isErr(err, target error) bool { return errors.Is(err, target) }

func seq(n int64) *int64 { return &n }

func itoa(n int) string { return fmt.Sprint(n) }

func asValidation(err error, target **registry.ValidationError) bool {
	return errors.As(err, target) && errors.Is(err, registry.ErrValidation)
}

// wk is a bare host's card path.
const wk = cardurl.WellKnownPath

// denied is how an operation p may not call refuses it: an anonymous caller
// needs a token, a token of another role is forbidden.
func denied(p registry.Principal) error {
	if p.Role == "" {
		return registry.ErrUnauthorized
	}
	return registry.ErrForbidden
}
