package agentcard

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.json from the current output")

// TestGolden pins the full normalized JSON (the card the API serves, plus
// the problems) of representative cards of every shape. Run with -update
// after an intended change and review the diff.
func TestGolden(t *testing.T) {
	for golden, prefix := range map[string]string{
		"v1-spec-main.json":        "A2A_main_",
		"v1-go-bare-scopes.json":   "a2a-go_a2a_json",
		"hybrid-python.json":       "a2a-python_",
		"v0.3-go-compat.json":      "a2a-go_a2acompat",
		"v0.2-spec.json":           "A2A_v0.2.6_",
		"v0.1-spec.json":           "A2A_v0.1.0_",
		"v0.3-wild-narrative.json": "wild_0xYuvi_",
		"v1-js-edge.json":          "GENERATED_a2a-js-1.3.0_generateAgentCardSignature_edge",
	} {
		t.Run(golden, func(t *testing.T) {
			p := mustParse(t, readCard(t, prefix), Options{CardURL: "https://georoute-agent.example.com/.well-known/agent-card.json"})
			got, err := json.MarshalIndent(struct {
				Card     *Card     `json:"card"`
				Problems []Problem `json:"problems"`
			}{p.Card, p.Problems}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("normalized JSON differs from %s (go test -update rewrites it):\n%s", path, got)
			}
		})
	}
}
