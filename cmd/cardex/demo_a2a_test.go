package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/demo"
	"github.com/cardexhq/cardex/internal/polltest"
)

// The demo says what is true: after the first probe round, every approved
// demo agent answers A2A through the real prober on each interface its
// card declares, but the few that show degraded and unreachable on
// purpose (demo.NotAnswering), and no two demo agents share a name.
func TestDemoAgentsAnswerA2A(t *testing.T) {
	s := startInProcess(t, filepath.Join(t.TempDir(), "demo"), "--demo")
	polltest.Until(t, "the welcome lines", 10*time.Second, func() bool { return strings.Contains(s.stdout.String(), "sign in at") })
	m := demoTokenLine.FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("no admin token line: %q", s.stdout.String())
	}
	type agent struct {
		Summary struct {
			Name string `json:"name"`
		} `json:"summary"`
		CardURL  string `json:"cardUrl"`
		Status   string `json:"status"`
		Liveness struct {
			State string `json:"state"`
		} `json:"liveness"`
	}
	var list struct {
		Agents    []agent `json:"agents"`
		TotalSize int     `json:"totalSize"`
	}
	approved := 0
	states := map[string][]string{}
	polltest.Until(t, "the first probe round", 60*time.Second, func() bool {
		if !strings.Contains(s.logs.String(), "demo catalogue approved") {
			return false
		}
		_, _, body := get(t, s.base+"/api/v1/agents?pageSize=100", m[1])
		list.Agents = nil
		json.Unmarshal([]byte(body), &list)
		approved, states = 0, map[string][]string{}
		for _, a := range list.Agents {
			if a.Status == "approved" {
				approved++
				states[a.Liveness.State] = append(states[a.Liveness.State], a.CardURL)
			}
		}
		return approved > 0 && len(states["unknown"]) == 0 && len(states[""]) == 0
	})
	t.Cleanup(func() {
		if t.Failed() {
			for st, urls := range states {
				t.Logf("%s: %d\n  %s", st, len(urls), strings.Join(urls, "\n  "))
			}
		}
	})
	if approved < 40 || len(list.Agents) != list.TotalSize {
		t.Fatalf("%d approved agents of %d (totalSize %d)", approved, len(list.Agents), list.TotalSize)
	}
	on := func(slug string) string { return fmt.Sprintf("/a2a-demo/%s/", slug) }
	if n := len(states["answering"]); n != approved-len(demo.NotAnswering) {
		t.Errorf("%d of %d approved demo agents answer A2A, want all but %d", n, approved, len(demo.NotAnswering))
	}
	if d := states["degraded"]; len(d) != 1 || !strings.Contains(d[0], on("legacy-concierge")) {
		t.Errorf("degraded: %v, want the legacy concierge only", d)
	}
	if u := states["unreachable"]; len(u) != 1 || !strings.Contains(u[0], on("night-shift")) {
		t.Errorf("unreachable: %v, want the night-shift scheduler only", u)
	}
	var names []string
	for _, a := range list.Agents {
		names = append(names, a.Summary.Name)
	}
	sort.Strings(names)
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			t.Errorf("two demo agents are named %q", names[i])
		}
	}
	if slices.Contains(names, "") {
		t.Errorf("a demo agent without a name: %q", names)
	}
}
