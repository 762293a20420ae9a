package demo

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
)

type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The live agents over time: the changing one publishes a version every
// demoChangeEvery with one more skill, the flagged one loses its
// signature after approval, the recovering one fails for
// demoRecoverAfter and then answers again.
func TestDemoLiveAgentsOverTime(t *testing.T) {
	clk := &stepClock{t: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}
	l, err := newLiveAgents("http://127.0.0.2:1", clk.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(m liveMode) (int, map[string]any) {
		t.Helper()
		rec := httptest.NewRecorder()
		l.ServeHTTP(rec, httptest.NewRequest("GET", l.url(m), nil))
		body, _ := io.ReadAll(rec.Result().Body)
		var card map[string]any
		if rec.Code == 200 {
			if _, err := agentcard.Parse(body, agentcard.Options{}); err != nil {
				t.Fatalf("mode %d serves a card that does not parse: %v", m, err)
			}
			json.Unmarshal(body, &card)
		}
		return rec.Code, card
	}
	skills := func(c map[string]any) int { return len(c["skills"].([]any)) }
	_, c := get(liveChanging)
	if c["version"] != "1.0.0" || skills(c) != 1 {
		t.Fatalf("changing agent starts at %v with %d skills", c["version"], skills(c))
	}
	clk.add(demoChangeEvery - time.Second)
	if _, c = get(liveChanging); c["version"] != "1.0.0" {
		t.Errorf("changed early: %v", c["version"])
	}
	if _, c = get(liveFlagged); c["signatures"] == nil {
		t.Error("the flagged agent is unsigned before approval")
	}
	if code, _ := get(liveRecovering); code != 200 {
		t.Errorf("the recovering agent answers %d before approval", code)
	}
	l.afterApproval()
	if _, c = get(liveChanging); c["version"] != "1.1.0" || skills(c) != 2 {
		t.Errorf("after approval: %v with %d skills", c["version"], skills(c))
	}
	clk.add(time.Second)
	if _, c = get(liveChanging); c["version"] != "1.2.0" || skills(c) != 3 {
		t.Errorf("after %s: %v with %d skills", demoChangeEvery, c["version"], skills(c))
	}
	if _, c = get(liveFlagged); c["signatures"] != nil {
		t.Error("the flagged agent is still signed after approval")
	}
	if code, _ := get(liveRecovering); code != http.StatusServiceUnavailable {
		t.Errorf("the recovering agent answers %d after approval", code)
	}
	clk.add(demoRecoverAfter)
	if code, _ := get(liveRecovering); code != 200 {
		t.Errorf("the recovering agent answers %d after %s", code, demoRecoverAfter)
	}
	if code, _ := get(livePending); code != 200 {
		t.Errorf("pending agent %d", code)
	}
	rec := httptest.NewRecorder()
	l.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.2:1/.well-known/jwks.json", nil))
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if json.Unmarshal(rec.Body.Bytes(), &set) != nil || len(set.Keys) != 1 || set.Keys[0]["kid"] == "" {
		t.Errorf("key set %s", rec.Body.String())
	}
	rec = httptest.NewRecorder()
	l.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.2:1/nothing", nil))
	if rec.Code != 404 {
		t.Errorf("unknown path %d", rec.Code)
	}
}
